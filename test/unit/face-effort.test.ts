import { test } from '../support/uvu.ts';
import * as assert from 'uvu/assert';
import { FACE_EFFORT_LADDER, FaceEffort } from '../../actors/face/face-effort.ts';

const [FULL, REDUCED, LEAST] = FACE_EFFORT_LADDER;
/** FACE_EFFORT_CALM_SECONDS's default. */
const CALM_MS = 20_000;

function clock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

/** One second of a thread offered `frames` frames, `dropped` of them replacing a waiting one; then the review. */
function second(effort: FaceEffort, time: ReturnType<typeof clock>, frames: number, dropped: number, busyShare: number): boolean {
  for (let i = 0; i < frames; i++) effort.offered(i < dropped);
  time.advance(1000);
  return effort.review(busyShare);
}

test('a thread that keeps up stays at full effort, however busy', () => {
  const time = clock();
  const effort = new FaceEffort(CALM_MS, time.now);
  for (let s = 0; s < 30; s++) assert.is(second(effort, time, 64, 0, 0.95), false);
  assert.equal(effort.current, FULL);
  assert.is(effort.level, 0);
});

test('more than 1 % of frames dropped within 5 s reduces the effort; 1 % does not', () => {
  const time = clock();
  const effort = new FaceEffort(CALM_MS, time.now);
  for (let s = 0; s < 5; s++) assert.is(second(effort, time, 64, s === 4 ? 3 : 0, 0.9), false, '3 of 320 frames is under 1 %');
  assert.is(effort.level, 0);
  assert.is(second(effort, time, 64, 2, 0.9), true, '5 of 320 is over it');
  assert.equal(effort.current, REDUCED);
  assert.is(effort.level, 1);
});

test('each step is judged on 5 s of its own frames before the next step down', () => {
  const time = clock();
  const effort = new FaceEffort(CALM_MS, time.now);
  assert.is(second(effort, time, 64, 10, 1), true);
  for (let s = 1; s < 5; s++) assert.is(second(effort, time, 64, 10, 1), false, `${s} s at the first step: frames waiting from full effort`);
  assert.is(effort.level, 1);
  assert.is(second(effort, time, 64, 0, 1), true, '40 of 320 dropped at the first step: the second one');
  assert.equal(effort.current, LEAST);
  for (let s = 0; s < 10; s++) assert.is(second(effort, time, 64, 32, 1), false, 'nothing lighter: frames are dropped');
  assert.is(effort.level, 2);
});

test('a lighter step goes back up after 20 s without drops and with the thread idle half the time', () => {
  const time = clock();
  const effort = new FaceEffort(CALM_MS, time.now);
  second(effort, time, 64, 10, 1);
  assert.is(effort.level, 1);
  for (let s = 0; s < 30; s++) assert.is(second(effort, time, 64, 0, 0.6), false, 'busy 60 % of the time: full effort might not fit');
  for (let s = 1; s < 20; s++) assert.is(second(effort, time, 64, 0, 0.4), false, `${s} s calm`);
  assert.is(second(effort, time, 64, 0, 0.4), true);
  assert.equal(effort.current, FULL);
});

test('back up one step at a time, 20 s of calm each', () => {
  const time = clock();
  const effort = new FaceEffort(CALM_MS, time.now);
  for (let s = 0; s < 6; s++) second(effort, time, 64, 10, 1);
  assert.is(effort.level, 2);
  for (let s = 1; s < 20; s++) second(effort, time, 64, 0, 0.3);
  assert.is(second(effort, time, 64, 0, 0.3), true);
  assert.equal(effort.current, REDUCED);
  for (let s = 1; s < 20; s++) assert.is(second(effort, time, 64, 0, 0.3), false, `${s} s calm at the first step`);
  assert.is(second(effort, time, 64, 0, 0.3), true);
  assert.equal(effort.current, FULL);
});

test('a dropped frame or a busy second starts the 20 s again', () => {
  const time = clock();
  const effort = new FaceEffort(CALM_MS, time.now);
  second(effort, time, 64, 10, 1);
  for (let s = 0; s < 15; s++) second(effort, time, 64, 0, 0.3);
  second(effort, time, 64, 1, 0.3);
  for (let s = 0; s < 15; s++) second(effort, time, 64, 0, 0.3);
  second(effort, time, 64, 0, 0.7);
  for (let s = 1; s < 20; s++) assert.is(second(effort, time, 64, 0, 0.3), false);
  assert.is(second(effort, time, 64, 0, 0.3), true);
});

test('back at full effort, the drops that caused the step down are forgotten', () => {
  const time = clock();
  const effort = new FaceEffort(CALM_MS, time.now);
  second(effort, time, 64, 10, 1);
  for (let s = 0; s < 20; s++) second(effort, time, 64, 0, 0.3);
  assert.is(effort.level, 0);
  assert.is(second(effort, time, 64, 0, 0.9), false);
  assert.is(second(effort, time, 64, 1, 0.9), false, '1 of 128 is under 1 %');
});

test.run();

import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { HostLoad } from '../../actors/host-load.ts';

function clock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

const everyone = () => true;

/** Asks every second, as the host does, until the host keeps up; the seconds that took. */
function secondsUntilKeepsUp(load: HostLoad, time: ReturnType<typeof clock>, measured = everyone): number {
  for (let s = 0; s <= 60; s++, time.advance(1000)) if (load.behind(measured) === undefined) return s;
  throw new Error(`still behind after 60 s: ${load.behind(measured)}`);
}

test('a host whose threads keep up is not behind', () => {
  const load = new HostLoad(clock().now);
  load.faceSaturated(false);
  load.speechWaited('a', 1);
  assert.is(load.behind(everyone), undefined);
});

test('one session shedding its own audio or dropping its own speech does not make the host behind', () => {
  const time = clock();
  const load = new HostLoad(time.now);
  for (let s = 0; s < 20; s++, time.advance(1000)) {
    load.audioShed('heavy', 2);
    load.speechDropped('heavy');
    load.speechWaited('heavy', 30);
  }
  assert.is(load.behind(everyone), undefined);
});

test('a shared thread behind for two measured sessions makes the host behind until 20 s within bounds', () => {
  const time = clock();
  const load = new HostLoad(time.now);
  load.audioShed('a', 0.5);
  load.audioShed('b', 0.5);
  assert.match(load.behind(everyone) ?? '', /^2 sessions shed audio in the last 10 s/);
  time.advance(10_500);
  assert.match(load.behind(everyone) ?? '', /^within the bounds for 0 s of the 20 s needed/, 'the window has moved on');
  assert.is(secondsUntilKeepsUp(load, time), 20);
});

test('speech waiting long for two sessions is behind; after that, 2 s is the bound to keep up', () => {
  const time = clock();
  const load = new HostLoad(time.now);
  load.speechWaited('a', 6);
  load.speechWaited('b', 4);
  assert.is(load.behind(everyone), undefined, 'one session over 5 s is not enough');
  load.speechWaited('b', 5.5);
  assert.match(load.behind(everyone) ?? '', /speech of 2 sessions waited over 5 s/);
  time.advance(11_000);
  load.speechWaited('a', 3);
  load.speechWaited('b', 3);
  assert.match(load.behind(everyone) ?? '', /waited over 2 s/, 'a host that was behind keeps up only under 2 s');
  load.speechDropped('a');
  load.speechDropped('c');
  assert.match(load.behind(everyone) ?? '', /2 sessions dropped speech|waited over 2 s/);
});

test('sessions still warming up (not measured for a window) do not count', () => {
  const time = clock();
  const load = new HostLoad(time.now);
  load.audioShed('new-1', 3);
  load.audioShed('new-2', 3);
  load.speechWaited('new-1', 9);
  load.speechWaited('new-2', 9);
  assert.is(load.behind(() => false), undefined);
  assert.ok(load.behind(everyone), 'the same signals from measured sessions count');
});

test('the face thread saturated at every stream\'s floor is behind only after 5 s, and keeps up 20 s after it ends', () => {
  const time = clock();
  const load = new HostLoad(time.now);
  load.faceSaturated(true, '3 % of frames dropped');
  time.advance(4000);
  assert.is(load.behind(everyone), undefined, 'a start-up transient');
  time.advance(1000);
  assert.match(load.behind(everyone) ?? '', /^face analysis saturated for 5 s with every stream at its lowest effort \(3 % of frames dropped\)/);
  load.faceSaturated(true);
  assert.ok(load.behind(everyone), 'a repeated report does not restart the clock');
  load.faceSaturated(false);
  assert.is(load.keepsUpInMs(), 20_000);
  assert.is(secondsUntilKeepsUp(load, time), 20);
  assert.is(load.keepsUpInMs(), 0);
});

test.run();

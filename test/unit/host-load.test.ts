import { test } from '../support/uvu.ts';
import * as assert from 'uvu/assert';
import { HostLoad } from '../../actors/host-load.ts';

function clock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

/** Asks every second, as the host does, until the host keeps up; the seconds that took. */
function secondsUntilKeepsUp(load: HostLoad, time: ReturnType<typeof clock>): number {
  for (let s = 0; s <= 60; s++, time.advance(1000)) if (load.behind() === undefined) return s;
  throw new Error(`still behind after 60 s: ${load.behind()}`);
}

test('a host that analyses every frame keeps up', () => {
  const time = clock();
  const load = new HostLoad(time.now);
  for (let s = 0; s < 20; s++, time.advance(1000)) for (let i = 0; i < 16; i++) load.videoSecond(4, 0);
  assert.is(load.behind(), undefined);
});

test('more than 5 % of frames dropped over the last 10 s is behind; it passes once the drops age out', () => {
  const time = clock();
  const load = new HostLoad(time.now);
  for (let s = 0; s < 10; s++, time.advance(1000)) for (let i = 0; i < 16; i++) load.videoSecond(4, i === 0 && s < 3 ? 1 : 0);
  assert.is(load.behind(), undefined, '3 of 643 frames dropped is under 5 %');
  for (let s = 0; s < 3; s++, time.advance(1000)) for (let i = 0; i < 16; i++) load.videoSecond(3, 1);
  assert.match(load.behind() ?? '', /^7\.5 % of face frames dropped/);
  time.advance(11_000);
  assert.match(load.behind() ?? '', /^within the bounds for 0 s of the 20 s needed/, 'the window has moved on');
  assert.is(secondsUntilKeepsUp(load, time), 20);
});

test('a few frames say nothing; any audio shed is behind', () => {
  const time = clock();
  const load = new HostLoad(time.now);
  load.videoSecond(3, 3);
  assert.is(load.behind(), undefined, 'six frames are too few to judge');
  load.audioShed(0.5);
  assert.match(load.behind() ?? '', /0\.5 s of audio shed/);
  time.advance(10_500);
  assert.ok(load.behind(), 'its second is still partly in the window');
  time.advance(1000);
  assert.is(secondsUntilKeepsUp(load, time), 20);
});

test('speech waiting over 5 s for transcription, or any dropped, is behind', () => {
  const time = clock();
  const load = new HostLoad(time.now);
  load.speechWaited(1.2);
  load.speechWaited(4.9);
  assert.is(load.behind(), undefined, 'waits up to 5 s are a busy host, not a behind one');
  load.speechWaited(7.25);
  assert.match(load.behind() ?? '', /^speech waited 7\.3 s for transcription/);
  time.advance(11_000);
  assert.is(secondsUntilKeepsUp(load, time), 20);
  load.speechDropped();
  load.speechDropped();
  assert.match(load.behind() ?? '', /^2 speech segments dropped untranscribed/);
});

test('a host that is behind keeps up again only after 20 s within the bounds: 1 % of frames, 2 s of speech wait', () => {
  const time = clock();
  const load = new HostLoad(time.now);
  // Each second 8 sessions analyse 4 frames and `dropping` of them drop one more; the host asks
  // itself every second. What it said last.
  const seconds = (count: number, dropping: number) => {
    let behind: string | undefined;
    for (let s = 0; s < count; s++, time.advance(1000)) {
      for (let i = 0; i < 8; i++) load.videoSecond(4, i < dropping ? 1 : 0);
      behind = load.behind();
    }
    return behind;
  };
  assert.is(seconds(10, 0), undefined);
  // The window is the current second and the ten before it.
  assert.match(seconds(10, 2) ?? '', /^5\.4 % of face frames dropped/); // 20 of 372
  assert.match(seconds(10, 1) ?? '', /^3\.3 % of face frames dropped/, 'a host that was keeping up would be, this one is not yet');
  assert.match(seconds(10, 0) ?? '', /^within the bounds for 2 s of the 20 s needed/, 'no drop in the window for 2 s');
  assert.match(seconds(10, 0) ?? '', /^within the bounds for 12 s/);
  assert.is(seconds(10, 0), undefined, '20 s within the bounds');
  assert.is(seconds(10, 1), undefined, 'back to the entry limit of 5 %');

  time.advance(11_000);
  load.speechWaited(6);
  assert.match(load.behind() ?? '', /^speech waited 6\.0 s/);
  time.advance(11_000);
  load.speechWaited(3);
  assert.match(load.behind() ?? '', /^speech waited 3\.0 s/, 'over 2 s after being behind');
  time.advance(11_000);
  load.speechWaited(1.5);
  assert.is(secondsUntilKeepsUp(load, time), 20);
  load.speechWaited(4.5);
  assert.is(load.behind(), undefined, 'under 5 s for a host that keeps up');
});

test.run();

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { HostLoad } from '../../actors/host-load.ts';

function clock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
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
  assert.is(load.behind(), undefined, 'the window has moved on');
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
  assert.is(load.behind(), undefined);
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
  assert.is(load.behind(), undefined);
  load.speechDropped();
  load.speechDropped();
  assert.match(load.behind() ?? '', /^2 speech segments dropped untranscribed/);
});

test('a host that is behind keeps up again only within the bounds: 1 % of frames, 2 s of speech wait', () => {
  const time = clock();
  const load = new HostLoad(time.now);
  const seconds = (count: number, dropped: number) => {
    for (let s = 0; s < count; s++, time.advance(1000)) for (let i = 0; i < 8; i++) load.videoSecond(4, i < dropped ? 1 : 0);
  };
  seconds(10, 0);
  assert.is(load.behind(), undefined);
  seconds(10, 2); // 2 of 8 sessions drop one frame of 5 each second: 2 of 34
  assert.match(load.behind() ?? '', /^5\.9 % of face frames dropped/);
  seconds(10, 1); // 1 of 33: a host that was keeping up would be, this one is not yet
  assert.match(load.behind() ?? '', /^3\.0 % of face frames dropped/);
  seconds(10, 0);
  assert.is(load.behind(), undefined, 'no frame dropped for a whole window');
  seconds(10, 1);
  assert.is(load.behind(), undefined, 'back to the entry limit of 5 %');

  load.speechWaited(6);
  assert.match(load.behind() ?? '', /^speech waited 6\.0 s/);
  time.advance(11_000);
  load.speechWaited(3);
  assert.match(load.behind() ?? '', /^speech waited 3\.0 s/, 'over 2 s after being behind');
  time.advance(11_000);
  load.speechWaited(1.5);
  assert.is(load.behind(), undefined);
  load.speechWaited(4.5);
  assert.is(load.behind(), undefined, 'under 5 s for a host that keeps up');
});

test.run();

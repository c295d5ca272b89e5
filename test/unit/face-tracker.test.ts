import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { Tracker, UNTRACKED, type Detection } from '../../actors/face/tracker.ts';
import { seededRandom } from '../../ops/support/seeded-random.ts';

const SURE = 0.9;
const box = (x: number, y = 100, size = 80, score = SURE): Detection => ({ x, y, width: size, height: size, score });

test('a face keeps its id while it moves', () => {
  const tracker = new Tracker();
  const ids = [0, 8, 16, 24, 32].map((dx) => tracker.update([box(100 + dx)])[0]);
  assert.equal(new Set(ids).size, 1);
});

test('a face keeps its id through a short occlusion, not a long one', () => {
  const tracker = new Tracker({ maxMissedFrames: 4 });
  const [id] = tracker.update([box(100)]);
  tracker.update([]);
  tracker.update([]);
  assert.equal(tracker.update([box(104)]), [id]);
  for (let i = 0; i < 5; i++) tracker.update([]);
  const [later] = tracker.update([box(104)]);
  assert.is.not(later, id);
});

test('two adjacent faces keep distinct ids, whatever the order of the detections', () => {
  const tracker = new Tracker();
  const [left, right] = tracker.update([box(100), box(170)]);
  assert.is.not(left, right);
  for (let step = 1; step <= 6; step++) {
    // They lean towards each other until the boxes overlap by a third.
    const a = box(100 + step * 4);
    const b = box(170 - step * 4);
    const swapped = step % 2 === 0;
    const ids = tracker.update(swapped ? [b, a] : [a, b]);
    assert.equal(swapped ? ids.reverse() : ids, [left, right], `step ${step}`);
  }
});

test('two faces crossing never share an id and never lose one to the other', () => {
  const tracker = new Tracker();
  const first = tracker.update([box(100), box(200)]);
  const seen = new Set(first);
  for (let step = 1; step <= 10; step++) {
    const ids = tracker.update([box(100 + step * 10), box(200 - step * 10)]);
    assert.is(new Set(ids).size, 2, `step ${step}: two faces, two ids`);
    ids.forEach((id) => seen.add(id));
  }
  assert.is(seen.size, 2, 'no face was given a new track while the other kept its own');
});

test('a new face gets a new id; one face lost leaves the other untouched', () => {
  const tracker = new Tracker();
  const [a] = tracker.update([box(100)]);
  const [a2, b] = tracker.update([box(102), box(400)]);
  assert.is(a2, a);
  assert.is.not(b, a);
  assert.equal(tracker.update([box(402)]), [b]);
  assert.equal(tracker.update([box(104), box(404)]), [a, b]);
});

// Six faces about 24 px wide side by side, 45 px apart (a group photo small in the frame), as a
// detector sees them in a dark, noisy picture: each is missed in about a third of the frames,
// its box moves by up to 4 px and its side changes by up to a fifth from one frame to the next.
function smallDimGroup(frames: number, seed: number): Detection[][] {
  const random = seededRandom(seed);
  const people = Array.from({ length: 6 }, (_, i) => ({ cx: 240 + 45 * (i % 3), cy: 130 + 60 * Math.floor(i / 3) }));
  return Array.from({ length: frames }, () =>
    people.flatMap(({ cx, cy }) => {
      if (random() < 0.35) return [];
      const side = 24 * (0.8 + 0.4 * random());
      const jitter = () => (random() - 0.5) * 8;
      return [{ x: cx + jitter() - side / 2, y: cy + jitter() - side / 2, width: side, height: side * 1.25, score: 0.72 + 0.2 * random() }];
    }),
  );
}

test('six small faces that flicker and jitter for 90 s at 4 fps stay six tracks', () => {
  for (const seed of [1, 2, 3]) {
    const tracker = new Tracker({ maxMissedFrames: 8 });
    // A face first found with a low score is followed from its first sure detection on.
    const ids = new Set(smallDimGroup(360, seed).flatMap((faces) => tracker.update(faces)).filter((id) => id !== UNTRACKED));
    assert.equal([...ids].sort((a, b) => a - b), [0, 1, 2, 3, 4, 5], `seed ${seed}`);
  }
});

test('a small face continues its track by position and size, not by overlap', () => {
  const tracker = new Tracker();
  const [id] = tracker.update([box(100, 100, 20)]);
  // 6 px right and down, 4 px smaller: the boxes overlap by less than a third of their union.
  assert.equal(tracker.update([box(106, 106, 16)]), [id]);
  // A face of twice the size in the same place is somebody else (nearer the camera).
  const [bigger] = tracker.update([box(98, 98, 32)]);
  assert.is.not(bigger, id);
});

test('a detection the detector is unsure of starts no track, but continues one', () => {
  const tracker = new Tracker({ maxMissedFrames: 8 });
  // A false detection near the detector's threshold, flickering in one place.
  for (let frame = 0; frame < 40; frame += 5) {
    assert.equal(tracker.update([box(300, 100, 20, 0.62)]), [UNTRACKED], `frame ${frame}`);
    for (let missed = 0; missed < 4; missed++) tracker.update([]);
  }
  const [face] = tracker.update([box(100, 100, 24, 0.85)]);
  assert.is.not(face, UNTRACKED);
  assert.equal(tracker.update([box(101, 100, 24, 0.62)]), [face], 'an unsure detection of a followed face keeps its id');
});

test.run();

import { test } from '../support/uvu.ts';
import * as assert from 'uvu/assert';
import type { Box } from '../../actors/face/box.ts';
import { Tracker } from '../../actors/face/tracker.ts';

const box = (x: number, y = 100, size = 80): Box => ({ x, y, width: size, height: size });

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

test.run();

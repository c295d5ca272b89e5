import { test } from '../../../support/uvu.ts';
import * as assert from 'uvu/assert';
import { CLASS_COUNT } from '../../../../actors/face/index.ts';
import { TrackSmoother } from '../../lib/track-smoother.ts';

/** One probability row that puts `p` on class `cls` and spreads the rest. */
function row(cls: number, p: number): number[] {
  return Array.from({ length: CLASS_COUNT }, (_, c) => (c === cls ? p : (1 - p) / (CLASS_COUNT - 1)));
}
const rows = (...r: number[][]) => Float32Array.from(r.flat());
const near = (actual: ArrayLike<number>, expected: number[]) => expected.every((v, i) => Math.abs(actual[i]! - v) < 1e-6);

test('each track gets the mean of its last K frames, the current one included', () => {
  const smoother = new TrackSmoother(3, 4);
  const a = [row(0, 0.9), row(1, 0.6), row(2, 0.3), row(3, 0.9)];
  const mean = (...r: number[][]) => r[0]!.map((_, c) => r.reduce((sum, x) => sum + x[c]!, 0) / r.length);
  assert.ok(near(smoother.smooth([7], rows(a[0]!)), a[0]!), 'first frame alone');
  assert.ok(near(smoother.smooth([7], rows(a[1]!)), mean(a[0]!, a[1]!)));
  assert.ok(near(smoother.smooth([7], rows(a[2]!)), mean(a[0]!, a[1]!, a[2]!)));
  assert.ok(near(smoother.smooth([7], rows(a[3]!)), mean(a[1]!, a[2]!, a[3]!)), 'the oldest frame leaves the window');
});

test('tracks are smoothed apart, in the order given', () => {
  const smoother = new TrackSmoother(2, 4);
  smoother.smooth([1, 2], rows(row(0, 1), row(5, 1)));
  const out = smoother.smooth([2, 1], rows(row(5, 0.5), row(0, 0.5)));
  assert.ok(near(out.subarray(0, CLASS_COUNT), row(5, 0.75)), 'track 2');
  assert.ok(near(out.subarray(CLASS_COUNT), row(0, 0.75)), 'track 1');
});

test('a window of one frame passes the probabilities through', () => {
  const smoother = new TrackSmoother(1, 4);
  const input = rows(row(2, 0.7));
  assert.is(smoother.smooth([3], input), input);
  assert.is(smoother.size, 0);
});

test('a track unseen for longer than the tracker keeps it is forgotten', () => {
  const smoother = new TrackSmoother(3, 2);
  smoother.smooth([1], rows(row(0, 1)));
  smoother.smooth([], new Float32Array(0));
  smoother.smooth([], new Float32Array(0));
  assert.is(smoother.size, 1, 'still kept after two unseen frames');
  smoother.smooth([], new Float32Array(0));
  assert.is(smoother.size, 0);
  assert.ok(near(smoother.smooth([1], rows(row(4, 1))), row(4, 1)), 'a new history');
});

test('a window that is not a whole number >= 1 is refused', () => {
  assert.throws(() => new TrackSmoother(0, 4));
  assert.throws(() => new TrackSmoother(2.5, 4));
});

test.run();

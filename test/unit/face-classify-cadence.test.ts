import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import type { Box } from '../../actors/face/box.ts';
import { ClassifyCadence } from '../../actors/face/classify-cadence.ts';
import { CLASS_COUNT } from '../../actors/face/expressions.ts';

const box = (x: number, size = 80): Box => ({ x, y: 100, width: size, height: size });
/** One probability row per answer, each filled with its own value. */
const answers = (...values: number[]) => Float32Array.from(values.flatMap((v) => new Array<number>(CLASS_COUNT).fill(v)));
const firstOfEach = (rows: Float32Array) => Array.from({ length: rows.length / CLASS_COUNT }, (_, i) => rows[i * CLASS_COUNT]);

/** Runs one frame, answering each due face with `value`; returns what was due and each face's first probability. */
function frame(cadence: ClassifyCadence, second: number, tracks: number[], boxes: Box[], value: number) {
  const due = cadence.due(second, tracks, boxes);
  const rows = cadence.merge(second, tracks, boxes, due, answers(...due.map(() => value)));
  return { due, held: firstOfEach(rows) };
}

test('every frame: every face is classified', () => {
  const cadence = new ClassifyCadence(1);
  for (let f = 0; f < 4; f++) assert.equal(frame(cadence, 0, [1, 2], [box(0), box(200)], f).due, [0, 1]);
});

test('a cadence given with the frame (reduced effort) overrides the constructed one for that frame', () => {
  const cadence = new ClassifyCadence(1);
  const run = (every: number | undefined) => cadence.due(0, [7], [box(100)], every).length;
  const seen = [2, 2, 2, undefined, 2, 2].map((every) => {
    const due = run(every);
    cadence.merge(0, [7], [box(100)], due ? [0] : [], answers(...(due ? [0.5] : [])));
    return due;
  });
  assert.equal(seen, [1, 0, 1, 1, 0, 1]);
});

test('every 2nd frame: the answer is held for the frame between', () => {
  const cadence = new ClassifyCadence(2);
  const seen = [0, 1, 2, 3].map((f) => frame(cadence, 0, [7], [box(100)], 0.1 * (f + 1)));
  assert.equal(seen.map((s) => s.due), [[0], [], [0], []]);
  assert.equal(seen.map((s) => s.held[0]!.toFixed(1)), ['0.1', '0.1', '0.3', '0.3']);
});

test('a track is classified on its first frame of each second: a row never holds an older second\'s answer', () => {
  const cadence = new ClassifyCadence(4);
  assert.equal(frame(cadence, 0, [7], [box(100)], 0.1).due, [0]);
  assert.equal(frame(cadence, 0, [7], [box(100)], 0.2).due, []);
  assert.equal(frame(cadence, 1, [7], [box(100)], 0.3).due, [0]);
});

test('a box that moved or changed size is classified again', () => {
  const cadence = new ClassifyCadence(4);
  frame(cadence, 0, [7], [box(100)], 0.1);
  assert.equal(frame(cadence, 0, [7], [box(102)], 0.2).due, [], 'a small shift keeps the answer');
  assert.equal(frame(cadence, 0, [7], [box(130)], 0.3).due, [0], 'moved');
  assert.equal(frame(cadence, 0, [7], [box(130, 60)], 0.4).due, [0], 'smaller');
});

test('new tracks are classified, held ones keep theirs, in the order given', () => {
  const cadence = new ClassifyCadence(3);
  frame(cadence, 0, [1], [box(0)], 0.1);
  const { due, held } = frame(cadence, 0, [2, 1], [box(300), box(0)], 0.5);
  assert.equal(due, [0]);
  assert.equal(held.map((v) => v!.toFixed(1)), ['0.5', '0.1']);
});

test('a track missing from a frame loses its answer', () => {
  const cadence = new ClassifyCadence(4);
  frame(cadence, 0, [1], [box(0)], 0.1);
  frame(cadence, 0, [], [], 0);
  assert.equal(frame(cadence, 0, [1], [box(0)], 0.2).due, [0]);
});

test('a cadence below 1 or not whole is refused', () => {
  assert.throws(() => new ClassifyCadence(0));
  assert.throws(() => new ClassifyCadence(1.5));
});

test.run();

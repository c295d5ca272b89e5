import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { Value } from '@sinclair/typebox/value';
import { FaceSecond, VideoSecond } from '../../bus/contracts/rows.ts';
import { SecondAggregator } from '../../actors/face/seconds.ts';

const SESSION = '0123456789abcdef01234567';

function collect() {
  const faces: FaceSecond[] = [];
  const videos: VideoSecond[] = [];
  const aggregator = new SecondAggregator(SESSION, {
    onFaceSecond: (row) => faces.push(row),
    onVideoSecond: (row) => videos.push(row),
  });
  return { aggregator, faces, videos };
}

// Class order: neutral, happy, sad, angry, fearful, disgusted, surprised.
const happyish = [0.1, 0.7, 0.05, 0.05, 0.04, 0.03, 0.03];
const neutralish = [0.5, 0.1, 0.1, 0.1, 0.1, 0.05, 0.05];
const surprisedish = [0.05, 0.05, 0.05, 0.05, 0.1, 0.1, 0.6];

test('per track and second: mean probabilities, argmax, frame count', () => {
  const { aggregator, faces, videos } = collect();
  aggregator.addFrame(0, [
    { track: 0, probabilities: happyish },
    { track: 1, probabilities: surprisedish },
  ]);
  aggregator.addFrame(0, [{ track: 0, probabilities: neutralish }]);
  aggregator.addDropped(0);
  assert.is(faces.length + videos.length, 0, 'a second is open until a later one starts');

  aggregator.addFrame(1, []);
  assert.is(faces.length, 2);
  const track0 = faces.find((row) => row.track === 0)!;
  assert.is(track0.second, 0);
  assert.is(track0.frames, 2);
  // mean of happy and neutral: focus 0.3, exaltation 0.4 -> exaltation
  assert.ok(Math.abs(track0.probabilities[0]! - 0.3) < 1e-12);
  assert.ok(Math.abs(track0.probabilities[1]! - 0.4) < 1e-12);
  assert.is(track0.dominant, 'exaltation');
  const track1 = faces.find((row) => row.track === 1)!;
  assert.is(track1.frames, 1);
  assert.is(track1.dominant, 'impact');
  assert.equal(track1.probabilities, surprisedish);
  assert.equal(videos, [{ session: SESSION, second: 0, frames: 2, faces: 2, dropped: 1, effort: 0 }]);
  for (const row of faces) assert.ok(Value.Check(FaceSecond, row));
  for (const row of videos) assert.ok(Value.Check(VideoSecond, row));
});

test('a second with analysed frames but no face still gives a VideoSecond; flush closes the last', () => {
  const { aggregator, faces, videos } = collect();
  aggregator.addFrame(5, []);
  aggregator.addFrame(5, []);
  aggregator.addFrame(7, [{ track: 3, probabilities: neutralish }]);
  aggregator.flush();
  assert.equal(videos, [
    { session: SESSION, second: 5, frames: 2, faces: 0, dropped: 0, effort: 0 },
    { session: SESSION, second: 7, frames: 1, faces: 1, dropped: 0, effort: 0 },
  ]);
  assert.equal(faces.map((row) => [row.second, row.track, row.dominant]), [[7, 3, 'focus']]);
  aggregator.flush();
  assert.is(videos.length, 2, 'nothing is emitted twice');
});

test('a second says the most steps below full effort any of its frames was analysed at', () => {
  const { aggregator, videos } = collect();
  aggregator.addFrame(0, [], 0);
  aggregator.addFrame(0, [], 2);
  aggregator.addFrame(0, [], 1);
  aggregator.addFrame(1, [], 1);
  aggregator.addFrame(2, []);
  aggregator.flush();
  assert.equal(videos.map((row) => [row.second, row.effort]), [[0, 2], [1, 1], [2, 0]]);
  for (const row of videos) assert.ok(Value.Check(VideoSecond, row));
});

test('a row of a publisher older than the effort field still validates; one out of range does not', () => {
  const row = { session: SESSION, second: 0, frames: 1, faces: 0, dropped: 0 };
  assert.ok(Value.Check(VideoSecond, row));
  assert.not.ok(Value.Check(VideoSecond, { ...row, effort: -1 }));
  assert.not.ok(Value.Check(VideoSecond, { ...row, effort: 1.5 }));
  assert.not.ok(Value.Check(VideoSecond, { ...row, effort: 256 }));
});

test('drops of a second with nothing analysed are reported with the next analysed second', () => {
  const { aggregator, videos } = collect();
  aggregator.addFrame(1, []);
  aggregator.addDropped(2);
  aggregator.addDropped(2);
  aggregator.addDropped(3);
  aggregator.addFrame(3, []);
  aggregator.flush();
  assert.equal(
    videos.map((row) => [row.second, row.frames, row.dropped]),
    [
      [1, 1, 0],
      [3, 1, 3],
    ],
  );
});

test.run();

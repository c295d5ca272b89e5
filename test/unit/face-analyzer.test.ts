import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { Value } from '@sinclair/typebox/value';
import { FaceSecond, VideoSecond } from '../../bus/contracts/rows.ts';
import { FaceAnalyzer } from '../../actors/face/analyzer.ts';
import { loadAnalysisModels } from '../../actors/face/analysis-models.ts';
import { readConfig } from '../../bus/config.ts';
import { EMOTION_OF_CLASS } from '../../actors/face/emotions.ts';
import { EXPRESSION_PHOTOS, loadPhoto } from '../../ops/support/face-photos.ts';

const SESSION = '65f0c0ffee0123456789abcd';
const { faces: models } = await loadAnalysisModels(readConfig().modelsDir);

async function analyzer() {
  const faces: FaceSecond[] = [];
  const videos: VideoSecond[] = [];
  const instance = new FaceAnalyzer({
    session: SESSION,
    models,
    fps: 4,
    onFaceSecond: (row) => faces.push(row),
    onVideoSecond: (row) => videos.push(row),
  });
  return { instance, faces, videos };
}

test('a happy face gives exaltation rows; frames offered while busy replace each other and count as dropped', async () => {
  const { instance, faces, videos } = await analyzer();
  const photo = loadPhoto('happy');
  const frame = (second: number) => ({ ...photo, second });
  instance.offer(frame(0)); // analysed at once
  instance.offer(frame(0)); // waits
  instance.offer(frame(0)); // replaces the waiting one
  await instance.flush();
  instance.offer(frame(1));
  await instance.flush();

  assert.equal(videos, [
    { session: SESSION, second: 0, frames: 2, faces: 1, dropped: 1, effort: 0 },
    { session: SESSION, second: 1, frames: 1, faces: 1, dropped: 0, effort: 0 },
  ]);
  assert.equal(faces.map((row) => [row.second, row.frames, row.dominant]), [
    [0, 2, 'exaltation'],
    [1, 1, 'exaltation'],
  ]);
  assert.is(faces[0]!.track, faces[1]!.track, 'the same face keeps its track');
  for (const row of faces) assert.ok(Value.Check(FaceSecond, row));
  for (const row of videos) assert.ok(Value.Check(VideoSecond, row));
});

test('each expression photo, one per second, gives its emotion as dominant', async () => {
  const { instance, faces } = await analyzer();
  for (const [second, name] of EXPRESSION_PHOTOS.entries()) {
    instance.offer({ ...loadPhoto(name), second });
    await instance.flush();
  }
  assert.equal(
    faces.map((row) => row.dominant),
    EXPRESSION_PHOTOS.map((name) => EMOTION_OF_CLASS[name]),
  );
});

test('classified on every 2nd frame: the classifier sees half the frames, and every second and its frames are still reported', async () => {
  const photo = loadPhoto('sad');
  const rows = async (classifyEvery: number) => {
    const faces: FaceSecond[] = [];
    const effort = { current: { detectionWidth: 0, classifyEvery }, offered: () => {} };
    const instance = new FaceAnalyzer({ session: SESSION, models, effort, fps: 4, onFaceSecond: (row) => faces.push(row), onVideoSecond: () => {} });
    const before = models.classifier.stats.items;
    for (let i = 0; i < 8; i++) {
      instance.offer({ ...photo, second: Math.floor(i / 4) });
      await instance.idle();
    }
    await instance.flush();
    return { faces, classified: models.classifier.stats.items - before };
  };
  const every = await rows(1);
  const half = await rows(2);
  assert.is(every.classified, 8);
  assert.is(half.classified, 4);
  assert.equal(half.faces.map((row) => [row.second, row.frames, row.dominant]), every.faces.map((row) => [row.second, row.frames, row.dominant]));
  // The same still photo every frame: the held answers are the ones that would have been measured.
  half.faces.forEach((row, i) => row.probabilities.forEach((p, c) => assert.ok(Math.abs(p - every.faces[i]!.probabilities[c]!) < 1e-5)));
});

test('the stream effort: rows say its level, it hears the tracked faces\' widths, and the work is metered', async () => {
  const photo = loadPhoto('happy');
  const widths: number[][] = [];
  let spent = 0;
  const videos: VideoSecond[] = [];
  const effort = {
    current: { detectionWidth: 320, classifyEvery: 2 },
    level: 2,
    offered: () => {},
    tracked: (faces: readonly number[], frame: { width: number }) => {
      assert.is(frame.width, photo.width);
      widths.push([...faces]);
    },
  };
  const instance = new FaceAnalyzer({
    session: SESSION, models, effort, fps: 4, spent: (seconds) => (spent += seconds),
    onFaceSecond: () => {}, onVideoSecond: (row) => videos.push(row),
  });
  for (let i = 0; i < 4; i++) {
    instance.offer({ ...photo, second: 0 });
    await instance.idle();
  }
  await instance.flush();
  assert.equal(videos.map((row) => [row.frames, row.faces, row.effort]), [[4, 1, 2]]);
  assert.is(widths.length, 4);
  const [[width]] = widths as [[number]];
  assert.ok(width > photo.width / 5 && width < photo.width, `the face's width in frame pixels (${width} of ${photo.width})`);
  assert.ok(spent > 0, 'the model calls are metered');
});

test('a failed analysis surfaces on flush and on the next offer', async () => {
  const { instance } = await analyzer();
  instance.offer({ rgb: new Uint8Array(10), width: 64, height: 64, second: 0 });
  try {
    await instance.flush();
    assert.unreachable('flush should reject');
  } catch (error) {
    assert.match(String(error), /smaller than 64x64/);
  }
  assert.throws(() => instance.offer({ rgb: new Uint8Array(64 * 64 * 3), width: 64, height: 64, second: 1 }));
});

test.run();

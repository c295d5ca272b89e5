import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { CROP_SIDE, CROP_VALUES, cropFace } from '../../actors/face/crop.ts';
import { EXPRESSION_CLASSES } from '../../actors/face/emotions.ts';
import { CLASS_COUNT } from '../../actors/face/expressions.ts';
import { loadAnalysisModels } from '../../actors/face/analysis-models.ts';
import { readConfig } from '../../bus/config.ts';
import { EXPRESSION_PHOTOS, expressionPhotoCrops } from '../../ops/support/face-photos.ts';

const { faces: models } = await loadAnalysisModels(readConfig().modelsDir);

test('each expression photo gets its own label as top class, in one batched call', async () => {
  const batch = await expressionPhotoCrops(models.detector);
  const probabilities = await models.classifier.classifyExpressions(batch, EXPRESSION_PHOTOS.length);
  assert.is(probabilities.length, EXPRESSION_PHOTOS.length * CLASS_COUNT);
  for (const [slot, name] of EXPRESSION_PHOTOS.entries()) {
    const row = Array.from(probabilities.subarray(slot * CLASS_COUNT, (slot + 1) * CLASS_COUNT));
    assert.ok(Math.abs(row.reduce((a, b) => a + b) - 1) < 1e-5, 'probabilities sum to 1');
    assert.is(EXPRESSION_CLASSES[row.indexOf(Math.max(...row))], name);
  }
});

test('a face classifies the same alone and within a batch', async () => {
  const batch = await expressionPhotoCrops(models.detector);
  const together = await models.classifier.classifyExpressions(batch, EXPRESSION_PHOTOS.length);
  const alone = await models.classifier.classifyExpressions(batch, 1);
  for (let c = 0; c < CLASS_COUNT; c++) assert.ok(Math.abs(alone[c]! - together[c]!) < 1e-5);
  assert.is((await models.classifier.classifyExpressions(batch, 0)).length, 0);
});

test('requests from several sessions at once share inference calls, each getting its own faces', async () => {
  const batch = await expressionPhotoCrops(models.detector);
  const alone = await models.classifier.classifyExpressions(batch, EXPRESSION_PHOTOS.length);
  // Seven "sessions", each with the one face of its own photo, asking at the same moment.
  const sessions = EXPRESSION_PHOTOS.map((_, slot) => batch.slice(slot * CROP_VALUES, (slot + 1) * CROP_VALUES));
  const before = { ...models.classifier.stats };
  const answers = await Promise.all(sessions.map((crops) => models.classifier.classifyExpressions(crops, 1)));
  const calls = models.classifier.stats.calls - before.calls;
  assert.is(models.classifier.stats.items - before.items, EXPRESSION_PHOTOS.length);
  assert.ok(calls < EXPRESSION_PHOTOS.length, `${calls} calls for ${EXPRESSION_PHOTOS.length} requests`);
  answers.forEach((answer, slot) => {
    assert.is(answer.length, CLASS_COUNT);
    for (let c = 0; c < CLASS_COUNT; c++) assert.ok(Math.abs(answer[c]! - alone[slot * CLASS_COUNT + c]!) < 1e-5);
  });
});

test('crop: the square around the box, resized, channels planar RGB', () => {
  // 4x4 frame: left half red, right half blue; a 2x4 box centred on the frame -> 4x4 square.
  const width = 4;
  const height = 4;
  const rgb = new Uint8Array(width * height * 3);
  for (let i = 0; i < width * height; i++) rgb.set(i % width < 2 ? [200, 0, 0] : [0, 0, 100], i * 3);
  const batch = new Float32Array(2 * CROP_VALUES).fill(-1);
  cropFace(rgb, width, height, { x: 1, y: 0, width: 2, height: 4 }, batch, 1);
  assert.ok(batch.subarray(0, CROP_VALUES).every((v) => v === -1), 'other slots untouched');
  const plane = CROP_SIDE * CROP_SIDE;
  const at = (channel: number, y: number, x: number) => batch[CROP_VALUES + channel * plane + y * CROP_SIDE + x]!;
  assert.is(at(0, 50, 0), 200);
  assert.is(at(2, 50, 0), 0);
  assert.is(at(0, 50, CROP_SIDE - 1), 0);
  assert.is(at(2, 50, CROP_SIDE - 1), 100);
  assert.is(at(1, 10, 10), 0);
  // across the edge between the halves the values blend
  const middle = at(0, 50, CROP_SIDE / 2);
  assert.ok(middle > 0 && middle < 200);
});

test('crop: a box reaching over the frame edge is clamped to the frame', () => {
  const rgb = new Uint8Array(10 * 10 * 3).fill(77);
  const batch = new Float32Array(CROP_VALUES);
  cropFace(rgb, 10, 10, { x: -6, y: 5, width: 10, height: 12 }, batch, 0);
  assert.ok(batch.every((v) => v === 77));
});

test.run();

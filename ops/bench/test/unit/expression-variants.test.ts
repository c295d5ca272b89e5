import { test } from '../../../support/uvu.ts';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { CLASS_COUNT, cropValues, EXPRESSION_CLASSES, type Face, loadAnalysisModels } from '../../../../actors/face/index.ts';
import { loadModel, ort } from '../../../../actors/models/index.ts';
import { readConfig } from '../../../../bus/index.ts';
import { alignedGeometry, cropAligned, mirrorCrop } from '../../lib/aligned-crop.ts';
import {
  loadSecondClassifier,
  MINI_XCEPTION_EXPRESSIONS,
  MINI_XCEPTION_ZOOM,
  SERVICE_VARIANT,
  VariantReader,
  type ExpressionVariant,
} from '../../lib/expression-variants.ts';
import { loadPhoto } from '../../../support/face-photos.ts';
import { LAB_MODEL_FILES } from '../../assets/models.ts';

const config = readConfig();
const { faces: models } = await loadAnalysisModels(config.modelsDir);
const second = await loadSecondClassifier(config.modelsDir);
const reader = (variant: Partial<ExpressionVariant>) => VariantReader.of({ ...SERVICE_VARIANT, ...variant }, models, second, 9);
const read = (variant: Partial<ExpressionVariant>, faces: readonly Face[]) => reader(variant).read(group, faces, faces.map((_, track) => track));

const group = loadPhoto('faces');
const groupFaces = await models.detector.detectFaces(group.rgb, group.width, group.height);

const top = (probabilities: ArrayLike<number>, face: number) => {
  const row = Array.from({ length: CLASS_COUNT }, (_, c) => probabilities[face * CLASS_COUNT + c]!);
  return EXPRESSION_CLASSES[row.indexOf(Math.max(...row))];
};
const near = (a: ArrayLike<number>, b: ArrayLike<number>, tolerance = 1e-5) =>
  a.length === b.length && Array.from(a).every((v, i) => Math.abs(v - b[i]!) < tolerance);

test('the second classifier answers in EXPRESSION_CLASSES order, whatever its own', async () => {
  const side = MINI_XCEPTION_EXPRESSIONS.side;
  const crops = new Float32Array(2 * cropValues(side));
  const names = ['happy', 'surprised'] as const;
  for (const [slot, name] of names.entries()) {
    const photo = loadPhoto(name);
    const [face] = await models.detector.detectFaces(photo.rgb, photo.width, photo.height);
    cropAligned(photo.rgb, photo.width, photo.height, alignedGeometry(face!.landmarks, MINI_XCEPTION_ZOOM), crops, slot, side);
  }
  const mapped = await second.classifyExpressions(crops, 2);
  names.forEach((name, face) => assert.is(top(mapped, face), name));
  // The raw model: its own order (angry, disgust, fear, happy, sad, surprise, neutral).
  const raw = await loadModel(join(config.modelsDir, LAB_MODEL_FILES.expressionsSecond));
  const { probs } = await raw.run({ input: new ort.Tensor('float32', crops, [2, 3, side, side]) });
  const own = probs!.data as Float32Array;
  for (let face = 0; face < 2; face++) {
    MINI_XCEPTION_EXPRESSIONS.classes.forEach((cls, column) => {
      assert.ok(Math.abs(own[face * CLASS_COUNT + column]! - mapped[face * CLASS_COUNT + EXPRESSION_CLASSES.indexOf(cls)]!) < 1e-6, cls);
    });
  }
});

test('flip: every face and its mirror image go through the model in one call, and are averaged', async () => {
  const before = { ...models.classifier.stats };
  const flipped = await read({ align: true, flip: true }, groupFaces);
  assert.is(models.classifier.stats.calls - before.calls, 1, 'one inference call');
  assert.is(models.classifier.stats.items - before.items, 1, 'one request of 2 x 6 crops');

  const values = cropValues(112);
  const crops = new Float32Array(groupFaces.length * 2 * values);
  groupFaces.forEach((face, i) => {
    cropAligned(group.rgb, group.width, group.height, alignedGeometry(face.landmarks), crops, 2 * i);
    mirrorCrop(crops, 2 * i, 2 * i + 1);
  });
  const each = await models.classifier.classifyExpressions(crops, 2 * groupFaces.length);
  const expected = new Float32Array(groupFaces.length * CLASS_COUNT);
  for (let i = 0; i < groupFaces.length; i++) {
    for (let c = 0; c < CLASS_COUNT; c++) expected[i * CLASS_COUNT + c] = (each[2 * i * CLASS_COUNT + c]! + each[(2 * i + 1) * CLASS_COUNT + c]!) / 2;
  }
  assert.ok(near(flipped, expected));
});

test('ensemble: the mean of the two classifiers, class by class; each row sums to 1', async () => {
  const both = await read({ align: true, ensemble: true }, groupFaces);
  const first = await read({ align: true }, groupFaces);
  const secondOnly = await new VariantReader({ ...SERVICE_VARIANT, align: true }, [{ classifier: second, zoom: MINI_XCEPTION_ZOOM }], 9).read(group, groupFaces, groupFaces.map((_, track) => track));
  assert.ok(near(both, first.map((p, i) => (p + secondOnly[i]!) / 2)));
  for (let face = 0; face < groupFaces.length; face++) {
    const sum = both.subarray(face * CLASS_COUNT, (face + 1) * CLASS_COUNT).reduce((a, b) => a + b, 0);
    assert.ok(Math.abs(sum - 1) < 1e-5);
  }
  // Five of the six smile broadly.
  assert.ok(groupFaces.filter((_, face) => top(both, face) === 'happy').length >= 5);
});

test('no faces, no call; the ensemble without its second model is refused', async () => {
  const before = { ...models.classifier.stats };
  assert.is((await read({ align: true, flip: true, ensemble: true }, [])).length, 0);
  assert.equal(models.classifier.stats, before);
  assert.throws(() => VariantReader.of({ ...SERVICE_VARIANT, ensemble: true }, models, undefined, 9), /second classifier/);
});

test.run();

import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { readConfig } from '../../bus/config.ts';
import { MODEL_FILES } from '../../actors/models/files.ts';
import { FaceDetector } from '../../actors/face/yunet.ts';
import { loadModel, ort } from '../../actors/models/onnx.ts';
import { CROP_SIDE } from '../../actors/face/crop.ts';
import { convertFaceExpressionModel } from '../../ops/assets/faceapi-to-onnx.ts';
import { extractFile, packTarball } from '../../ops/assets/npm-pack.ts';
import { EXPRESSION_PHOTOS, expressionPhotoCrops } from '../../ops/support/face-photos.ts';

const config = readConfig();

const cacheDir = resolve(config.varDir, 'assets-cache');
let work = '';

test.before(async () => {
  const tarball = await packTarball('@vladmandic/face-api', '1.7.15', cacheDir);
  work = await mkdtemp(join(cacheDir, '.faceapi-test-'));
  for (const file of ['face_expression_model-weights_manifest.json', 'face_expression_model.bin']) {
    await extractFile(tarball, `model/${file}`, join(work, file));
  }
});

test.after(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});


test('the converted model agrees with the reference model on real face crops', async () => {
  const manifest = join(work, 'face_expression_model-weights_manifest.json');
  await convertFaceExpressionModel(manifest, join(work, 'converted.onnx'));
  await convertFaceExpressionModel(manifest, join(work, 'again.onnx'));
  assert.ok((await readFile(join(work, 'converted.onnx'))).equals(await readFile(join(work, 'again.onnx'))), 'same bytes every run');

  const converted = await loadModel(join(work, 'converted.onnx'));
  const reference = await loadModel(join(config.modelsDir, MODEL_FILES.expressions));
  const input = new ort.Tensor('float32', await expressionPhotoCrops(new FaceDetector(await loadModel(join(config.modelsDir, MODEL_FILES.faceDetector)))), [EXPRESSION_PHOTOS.length, 3, CROP_SIDE, CROP_SIDE]);
  const ours = await converted.run({ input });
  const theirs = await reference.run({ input });
  for (const output of ['probs', 'logits']) {
    assert.equal(ours[output]!.dims, [EXPRESSION_PHOTOS.length, 7]);
    const a = ours[output]!.data as Float32Array;
    const b = theirs[output]!.data as Float32Array;
    const worst = a.reduce((max, v, i) => Math.max(max, Math.abs(v - b[i]!)), 0);
    assert.ok(worst < 1e-4, `${output} differ by ${worst}`);
  }
});

test.run();

import { test } from '../../../support/uvu.ts';
import * as assert from 'uvu/assert';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { loadGraphModel } from '@tensorflow/tfjs-converter';
import { readConfig } from '../../../../bus/index.ts';
import { loadModel, MODEL_FILES, ort, sha256File } from '../../../../actors/models/index.ts';
import { cropFace, cropValues, FaceDetector } from '../../../../actors/face/index.ts';
import { alignedGeometry, cropAligned } from '../../lib/aligned-crop.ts';
import { convertHumanEmotionModel } from '../../assets/human-emotion-to-onnx.ts';
import { HUMAN, LAB_MODEL_ASSETS, LAB_MODEL_FILES, LAB_RECIPES } from '../../assets/models.ts';
import { extractFile, packTarball } from '../../../assets/npm-pack.ts';
import { EXPRESSION_PHOTOS, loadPhoto } from '../../../support/face-photos.ts';

const config = readConfig();
const cacheDir = resolve(config.varDir, 'assets-cache');
const SIDE = 64;
let work = '';

test.before(async () => {
  const tarball = await packTarball(HUMAN.pkg, HUMAN.version, cacheDir);
  work = await mkdtemp(join(cacheDir, '.human-test-'));
  for (const file of ['emotion.json', 'emotion.bin']) await extractFile(tarball, `models/${file}`, join(work, file));
  await tf.setBackend('cpu');
});

test.after(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

/** The expression photos' faces as 64x64 RGB crops (NCHW, 0..255): aligned, and around the box. */
async function faceCrops(): Promise<{ crops: Float32Array; count: number }> {
  const detector = new FaceDetector(await loadModel(join(config.modelsDir, MODEL_FILES.faceDetector)));
  const values = cropValues(SIDE);
  const crops = new Float32Array(2 * EXPRESSION_PHOTOS.length * values);
  for (const [i, name] of EXPRESSION_PHOTOS.entries()) {
    const photo = loadPhoto(name);
    const [face] = await detector.detectFaces(photo.rgb, photo.width, photo.height);
    if (!face) throw new Error(`no face in ${name}.jpg`);
    cropAligned(photo.rgb, photo.width, photo.height, alignedGeometry(face.landmarks, 0.85), crops, 2 * i, SIDE);
    cropFace(photo.rgb, photo.width, photo.height, face, crops, 2 * i + 1, SIDE);
  }
  return { crops, count: 2 * EXPRESSION_PHOTOS.length };
}

test('the converted model agrees with Human running the graph model in TensorFlow.js, within 1e-4, on real faces', async () => {
  const json = join(work, 'emotion.json');
  await convertHumanEmotionModel(json, join(work, 'converted.onnx'));
  await convertHumanEmotionModel(json, join(work, 'again.onnx'));
  const bytes = await readFile(join(work, 'converted.onnx'));
  assert.ok(bytes.equals(await readFile(join(work, 'again.onnx'))), 'same bytes every run');
  const entry = LAB_MODEL_ASSETS.find((asset) => asset.file === LAB_MODEL_FILES.expressionsSecond)!;
  assert.ok(entry.sha256.includes(await sha256File(join(work, 'converted.onnx'))), 'the digest the manifest accepts');

  const { crops, count } = await faceCrops();
  const onnx = await (await loadModel(join(work, 'converted.onnx'))).run({ input: new ort.Tensor('float32', crops, [count, 3, SIDE, SIDE]) });
  assert.equal(onnx.probs!.dims, [count, 7]);

  // TensorFlow.js: the graph model as published, fed as Human feeds it (src/gear/emotion.ts):
  // the face in 0..1, grey = sum of the channels times [0.2989, 0.587, 0.114], then (grey - 0.5) * 2.
  const model = JSON.parse(await readFile(json, 'utf8'));
  const weights = await readFile(join(work, 'emotion.bin'));
  const graph = await loadGraphModel(
    tf.io.fromMemory({
      modelTopology: model.modelTopology,
      weightSpecs: model.weightsManifest[0].weights,
      weightData: weights.buffer.slice(weights.byteOffset, weights.byteOffset + weights.length),
    }),
  );
  const reference = tf.tidy(() => {
    const face = tf.div(tf.transpose(tf.tensor4d(crops, [count, 3, SIDE, SIDE]), [0, 2, 3, 1]), 255);
    const grey = tf.sum(tf.mul(face, tf.tensor1d([0.2989, 0.587, 0.114])), 3, true);
    const input = tf.mul(tf.sub(grey, 0.5), 2);
    const [probs, logits] = graph.execute(input, ['Identity', 'StatefulPartitionedCall/model_1/global_average_pooling2d_1/Mean']) as tf.Tensor[];
    return { probs: probs!.dataSync() as Float32Array, logits: logits!.dataSync() as Float32Array };
  });
  for (const output of ['probs', 'logits'] as const) {
    const ours = onnx[output]!.data as Float32Array;
    const theirs = reference[output];
    assert.is(ours.length, theirs.length);
    const worst = ours.reduce((max, v, i) => Math.max(max, Math.abs(v - theirs[i]!)), 0);
    assert.ok(worst < 1e-4, `${output} differ by ${worst}`);
  }
});

test('the installed model is the converter output', async () => {
  const entry = LAB_MODEL_ASSETS.find((asset) => asset.file === LAB_MODEL_FILES.expressionsSecond)!;
  assert.ok(entry.sha256.includes(await sha256File(join(config.modelsDir, LAB_MODEL_FILES.expressionsSecond))));
});

test("every lab model built locally names one of the lab's recipes", () => {
  const recipes = LAB_MODEL_ASSETS.flatMap((asset) => asset.sources.flatMap((source) => (source.kind === 'build' ? [source.recipe] : [])));
  assert.equal(recipes.filter((recipe) => !(recipe in LAB_RECIPES)), []);
});

test.run();

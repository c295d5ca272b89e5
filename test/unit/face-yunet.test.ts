import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { decodeYunet, FaceDetector, paddedSize, toYunetInput, type YunetOutputs } from '../../actors/face/yunet.ts';
import { loadAnalysisModels } from '../../actors/face/analysis-models.ts';
import { MODEL_FILES } from '../../actors/models/files.ts';
import { loadModel } from '../../actors/models/onnx.ts';
import { readConfig } from '../../bus/config.ts';
import { EXPRESSION_PHOTOS, loadPhoto } from '../../ops/support/face-photos.ts';

const { detector } = (await loadAnalysisModels(readConfig().modelsDir)).faces;

test('finds the six faces of the group photo', async () => {
  const photo = loadPhoto('faces');
  assert.ok(Math.max(photo.width, photo.height) <= 640);
  const faces = await detector.detectFaces(photo.rgb, photo.width, photo.height);
  assert.is(faces.length, 6);
  for (const face of faces) {
    assert.ok(face.score >= 0.6 && face.score <= 1);
    assert.ok(face.x > -face.width / 2 && face.x + face.width / 2 < photo.width, 'centre inside the frame');
    assert.ok(face.width > 40 && face.height > 40);
    assert.is(face.landmarks.length, 5);
    const [rightEye, leftEye] = face.landmarks;
    assert.ok(rightEye![0] < leftEye![0], 'the right eye is on the left of the picture');
    for (const [x, y] of face.landmarks) {
      assert.ok(x >= face.x && x <= face.x + face.width && y >= face.y && y <= face.y + face.height, 'landmark inside its box');
    }
  }
});

test('finds exactly one face in each single-face photo', async () => {
  for (const name of EXPRESSION_PHOTOS) {
    const photo = loadPhoto(name);
    const faces = await detector.detectFaces(photo.rgb, photo.width, photo.height);
    assert.is(faces.length, 1, name);
  }
});

test('frames of one size from several sessions share model calls, each getting its own faces', async () => {
  const group = loadPhoto('faces');
  const blank = { rgb: new Uint8Array(group.rgb.length).fill(128), width: group.width, height: group.height };
  const alone = await detector.detectFaces(group.rgb, group.width, group.height);
  const before = { ...detector.stats };
  const frames = [group, blank, group, blank];
  const found = await Promise.all(frames.map((f) => detector.detectFaces(f.rgb, f.width, f.height)));
  assert.is(detector.stats.items - before.items, frames.length);
  assert.ok(detector.stats.calls - before.calls < frames.length, `${detector.stats.calls - before.calls} calls`);
  assert.equal(found.map((faces) => faces.length), [6, 0, 6, 0]);
  found[2]!.forEach((face, i) => assert.ok(Math.abs(face.x - alone[i]!.x) < 0.01 && Math.abs(face.score - alone[i]!.score) < 1e-4));
});

test('on the frame scaled down to 320 px, the same six faces are found where they are, in frame pixels', async () => {
  const photo = loadPhoto('faces');
  const full = detector;
  const small = new FaceDetector(await loadModel(join(readConfig().modelsDir, MODEL_FILES.faceDetector)), undefined, 320);
  const reference = await full.detectFaces(photo.rgb, photo.width, photo.height);
  const found = await small.detectFaces(photo.rgb, photo.width, photo.height);
  assert.equal(await full.detectFaces(photo.rgb, photo.width, photo.height, 320), found, 'a width given with the frame (reduced effort) does the same');
  assert.is(found.length, 6);
  for (const face of found) {
    const near = reference.find((r) => Math.abs(r.x + r.width / 2 - (face.x + face.width / 2)) < 0.1 * r.width);
    assert.ok(near, `a face at x ${face.x.toFixed(0)} found at full size too`);
    assert.ok(Math.abs(face.width / near.width - 1) < 0.15, 'about as wide');
    // Within a fifth of the eye distance: the crops are placed by these.
    const eyes = Math.hypot(near.landmarks[1]![0] - near.landmarks[0]![0], near.landmarks[1]![1] - near.landmarks[0]![1]);
    face.landmarks.forEach(([x, y], k) => assert.ok(Math.hypot(x - near.landmarks[k]![0], y - near.landmarks[k]![1]) < 0.2 * eyes, `landmark ${k}`));
  }
});

test('finds nothing in a blank frame', async () => {
  assert.equal(await detector.detectFaces(new Uint8Array(320 * 240 * 3).fill(128), 320, 240), []);
});

test('input is planar BGR, zero-padded to multiples of 32', () => {
  assert.is(paddedSize(240), 256);
  assert.is(paddedSize(320), 320);
  const rgb = Uint8Array.of(10, 20, 30, 40, 50, 60); // two pixels in one row
  const out = new Float32Array(3 * 32 * 32).fill(-1);
  toYunetInput(rgb, 2, 1, out, 32, 32);
  const plane = 32 * 32;
  assert.equal([out[0], out[1], out[plane], out[plane + 1], out[2 * plane], out[2 * plane + 1]], [30, 60, 20, 50, 10, 40]);
  assert.ok(out.every((v) => v >= 0), 'every padding value written');
  assert.is(out.filter((v) => v !== 0).length, 6);
});

function emptyOutputs(padW: number, padH: number): Record<string, Float32Array> {
  const outputs: Record<string, Float32Array> = {};
  for (const stride of [8, 16, 32]) {
    const n = (padW / stride) * (padH / stride);
    outputs[`cls_${stride}`] = new Float32Array(n);
    outputs[`obj_${stride}`] = new Float32Array(n);
    outputs[`bbox_${stride}`] = new Float32Array(n * 4);
    outputs[`kps_${stride}`] = new Float32Array(n * 10);
  }
  return outputs;
}

test('decode: anchor offsets and log sizes become frame boxes and landmarks', () => {
  const outputs = emptyOutputs(64, 32);
  // stride 16 grid is 4 columns x 2 rows; anchor at row 1, col 2 -> index 6
  const i = 6;
  outputs.cls_16![i] = 0.9;
  outputs.obj_16![i] = 0.9;
  outputs.bbox_16!.set([0.5, 0.25, Math.log(2), Math.log(1.5)], i * 4);
  outputs.kps_16!.set([0, 0, 1, 0, 0.5, 0.5, 0, 1, 1, 1], i * 10);
  // below threshold: sqrt(0.5 * 0.5) = 0.5
  outputs.cls_8![3] = 0.5;
  outputs.obj_8![3] = 0.5;
  const faces = decodeYunet(outputs as YunetOutputs, 64, 32);
  assert.is(faces.length, 1);
  const face = faces[0]!;
  assert.ok(Math.abs(face.score - 0.9) < 1e-6);
  // centre ((2 + 0.5) * 16, (1 + 0.25) * 16) = (40, 20); size (32, 24)
  assert.ok(Math.abs(face.x - 24) < 1e-4 && Math.abs(face.y - 8) < 1e-4);
  assert.ok(Math.abs(face.width - 32) < 1e-4 && Math.abs(face.height - 24) < 1e-4);
  assert.equal(face.landmarks, [[32, 16], [48, 16], [40, 24], [32, 32], [48, 32]]);
});

test('decode: overlapping candidates keep only the best, distant ones both stay', () => {
  const outputs = emptyOutputs(64, 64);
  // stride 8: 8x8 grid. Two neighbours describing almost the same box, one far away.
  const put = (index: number, score: number, dx: number) => {
    outputs.cls_8![index] = score;
    outputs.obj_8![index] = score;
    outputs.bbox_8!.set([dx, 0, Math.log(3), Math.log(3)], index * 4);
  };
  put(9, 0.8, 0); // row 1, col 1
  put(10, 0.95, -0.9); // row 1, col 2, shifted back onto the first
  put(54, 0.7, 0); // row 6, col 6
  const faces = decodeYunet(outputs as YunetOutputs, 64, 64);
  assert.is(faces.length, 2);
  assert.ok(Math.abs(faces[0]!.score - 0.95) < 1e-6);
  assert.ok(Math.abs(faces[1]!.score - 0.7) < 1e-6);
});

test.run();

import { test } from '../../../support/uvu.ts';
import * as assert from 'uvu/assert';
import { CROP_SIDE, CROP_VALUES, cropFace, cropValues, loadAnalysisModels } from '../../../../actors/face/index.ts';
import { alignedGeometry, cropAligned, mirrorCrop } from '../../lib/aligned-crop.ts';
import { readConfig } from '../../../../bus/index.ts';
import { loadPhoto, type Photo } from '../../../support/face-photos.ts';

type Point = [number, number];
// An upright face: eyes 40 px apart at y = 100, nose below, mouth 40 px below the eyes.
const UPRIGHT: Point[] = [
  [180, 100],
  [220, 100],
  [200, 120],
  [185, 140],
  [215, 140],
];

function rotate(points: Point[], degrees: number, [cx, cy]: Point): Point[] {
  const a = (degrees * Math.PI) / 180;
  return points.map(([x, y]) => [cx + (x - cx) * Math.cos(a) - (y - cy) * Math.sin(a), cy + (x - cx) * Math.sin(a) + (y - cy) * Math.cos(a)]);
}

const close = (a: number, b: number, tolerance = 1e-9) => Math.abs(a - b) <= tolerance;

test('aligned geometry: level eyes, centre below them, side from the eye distance', () => {
  const g = alignedGeometry(UPRIGHT);
  assert.ok(close(g.angle, 0));
  assert.ok(close(g.cx, 200));
  assert.ok(close(g.cy, 100 + 0.33 * 40));
  assert.ok(close(g.side, 2.9 * 40));
  assert.ok(close(alignedGeometry(UPRIGHT, 0.5).side, 1.45 * 40), 'zoom scales the side');
  // Whichever eye comes first, the same square.
  const swapped = alignedGeometry([UPRIGHT[1]!, UPRIGHT[0]!, UPRIGHT[2]!, UPRIGHT[4]!, UPRIGHT[3]!]);
  assert.ok(close(swapped.angle, 0) && close(swapped.cx, g.cx) && close(swapped.cy, g.cy) && close(swapped.side, g.side));
});

test('aligned geometry follows a tilted face: the angle of the eyes, the same side, the centre turned with the face', () => {
  const pivot: Point = [200, 120];
  const upright = alignedGeometry(UPRIGHT);
  for (const degrees of [-30, -12, 7, 25]) {
    const g = alignedGeometry(rotate(UPRIGHT, degrees, pivot));
    assert.ok(close(g.angle, (degrees * Math.PI) / 180, 1e-9), `angle at ${degrees}`);
    assert.ok(close(g.side, upright.side, 1e-9), `side at ${degrees}`);
    const [centre] = rotate([[upright.cx, upright.cy]], degrees, pivot);
    assert.ok(close(g.cx, centre![0], 1e-9) && close(g.cy, centre![1], 1e-9), `centre at ${degrees}`);
  }
});

test('aligned geometry of a face turned sideways keeps its size from the eyes-to-mouth distance', () => {
  // Eyes 20 px apart (a head turned away), mouth still 40 px below them.
  const turned: Point[] = [
    [190, 100],
    [210, 100],
    [205, 120],
    [192, 140],
    [208, 140],
  ];
  assert.ok(close(alignedGeometry(turned).side, 2.9 * 0.8 * 40));
});

/** A smooth picture (so bilinear sampling is nearly exact), optionally turned about (cx, cy). */
function pattern(width: number, height: number, degrees = 0, cx = 0, cy = 0): Photo {
  const rgb = new Uint8Array(width * height * 3);
  const a = (-degrees * Math.PI) / 180;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      // Where this pixel's centre was before the turn.
      const dx = x + 0.5 - cx;
      const dy = y + 0.5 - cy;
      const ux = cx + dx * Math.cos(a) - dy * Math.sin(a);
      const uy = cy + dx * Math.sin(a) + dy * Math.cos(a);
      const at = (y * width + x) * 3;
      rgb[at] = 128 + 100 * Math.sin(ux / 13);
      rgb[at + 1] = 128 + 100 * Math.cos(uy / 17);
      rgb[at + 2] = 128 + 60 * Math.sin((ux + uy) / 19);
    }
  }
  return { rgb, width, height };
}

test('an aligned crop with level eyes samples exactly as the box crop does', () => {
  const picture = pattern(160, 120);
  const box = { x: 40, y: 20, width: 70, height: 70 };
  const boxCrop = new Float32Array(CROP_VALUES);
  const aligned = new Float32Array(CROP_VALUES);
  cropFace(picture.rgb, picture.width, picture.height, box, boxCrop, 0);
  cropAligned(picture.rgb, picture.width, picture.height, { cx: 75, cy: 55, side: 70, angle: 0 }, aligned, 0);
  const worst = boxCrop.reduce((max, v, i) => Math.max(max, Math.abs(v - aligned[i]!)), 0);
  assert.ok(worst < 1e-3, `differ by ${worst}`);
});

test('a turned picture, cropped aligned by its angle, gives the upright crop', () => {
  const [cx, cy] = [100, 90];
  const upright = pattern(200, 180);
  const turned = pattern(200, 180, 20, cx, cy);
  const side = 64;
  const a = new Float32Array(cropValues(side));
  const b = new Float32Array(cropValues(side));
  cropAligned(upright.rgb, 200, 180, { cx, cy, side: 90, angle: 0 }, a, 0, side);
  cropAligned(turned.rgb, 200, 180, { cx, cy, side: 90, angle: (20 * Math.PI) / 180 }, b, 0, side);
  const meanError = a.reduce((sum, v, i) => sum + Math.abs(v - b[i]!), 0) / a.length;
  assert.ok(meanError < 1.5, `mean difference ${meanError} grey levels`);
});

test('outside the frame an aligned crop repeats the edge pixels', () => {
  const rgb = new Uint8Array(10 * 10 * 3).fill(77);
  const batch = new Float32Array(CROP_VALUES);
  cropAligned(rgb, 10, 10, { cx: 0, cy: 10, side: 30, angle: 0.4 }, batch, 0);
  assert.ok(batch.every((v) => Math.abs(v - 77) < 1e-4));
});

test('a mirrored crop reverses every row of every channel, leaving other slots alone', () => {
  const side = 4;
  const values = cropValues(side);
  const batch = new Float32Array(3 * values).fill(-1);
  for (let i = 0; i < values; i++) batch[i] = i;
  mirrorCrop(batch, 0, 2, side);
  assert.ok(batch.subarray(values, 2 * values).every((v) => v === -1), 'slot 1 untouched');
  for (let row = 0; row < 3 * side; row++) {
    for (let x = 0; x < side; x++) assert.is(batch[2 * values + row * side + x], row * side + (side - 1 - x));
  }
  mirrorCrop(batch, 2, 1, side);
  assert.equal(Array.from(batch.subarray(values, 2 * values)), Array.from(batch.subarray(0, values)), 'twice mirrored is the crop');
});

test('a crop side outside 1..112 is refused', () => {
  const batch = new Float32Array(CROP_VALUES);
  assert.throws(() => cropFace(new Uint8Array(300), 10, 10, { x: 0, y: 0, width: 5, height: 5 }, batch, 0, CROP_SIDE + 1));
  assert.throws(() => cropAligned(new Uint8Array(300), 10, 10, { cx: 5, cy: 5, side: 5, angle: 0 }, batch, 0, 0));
});

/** The photo turned by `degrees` about its centre, on grey, same size. */
function turnPhoto(photo: Photo, degrees: number): Photo {
  const a = (-degrees * Math.PI) / 180;
  const rgb = new Uint8Array(photo.rgb.length).fill(128);
  const [cx, cy] = [photo.width / 2, photo.height / 2];
  for (let y = 0; y < photo.height; y++) {
    for (let x = 0; x < photo.width; x++) {
      const sx = Math.round(cx + (x + 0.5 - cx) * Math.cos(a) - (y + 0.5 - cy) * Math.sin(a) - 0.5);
      const sy = Math.round(cy + (x + 0.5 - cx) * Math.sin(a) + (y + 0.5 - cy) * Math.cos(a) - 0.5);
      if (sx < 0 || sy < 0 || sx >= photo.width || sy >= photo.height) continue;
      rgb.set(photo.rgb.subarray((sy * photo.width + sx) * 3, (sy * photo.width + sx) * 3 + 3), (y * photo.width + x) * 3);
    }
  }
  return { ...photo, rgb };
}

test('on a real face turned 20 degrees, the aligned crop is far closer to the upright one than the box crop is', async () => {
  const { detector } = (await loadAnalysisModels(readConfig().modelsDir)).faces;
  const upright = loadPhoto('surprised');
  const turned = turnPhoto(upright, 20);
  const [face] = await detector.detectFaces(upright.rgb, upright.width, upright.height);
  const [turnedFace] = await detector.detectFaces(turned.rgb, turned.width, turned.height);
  assert.ok(face && turnedFace, 'a face in both');
  assert.ok(Math.abs(alignedGeometry(turnedFace.landmarks).angle - alignedGeometry(face.landmarks).angle - (20 * Math.PI) / 180) < 0.1, 'the eyes say 20 degrees');
  const crops = new Float32Array(4 * CROP_VALUES);
  cropAligned(upright.rgb, upright.width, upright.height, alignedGeometry(face.landmarks), crops, 0);
  cropAligned(turned.rgb, turned.width, turned.height, alignedGeometry(turnedFace.landmarks), crops, 1);
  cropFace(upright.rgb, upright.width, upright.height, face, crops, 2);
  cropFace(turned.rgb, turned.width, turned.height, turnedFace, crops, 3);
  const difference = (p: number, q: number) => {
    let sum = 0;
    for (let i = 0; i < CROP_VALUES; i++) sum += Math.abs(crops[p * CROP_VALUES + i]! - crops[q * CROP_VALUES + i]!);
    return sum / CROP_VALUES;
  };
  const aligned = difference(0, 1);
  const boxed = difference(2, 3);
  // Landmarks move by a few pixels and degrees between the two pictures: about half the difference is left.
  assert.ok(aligned < 0.6 * boxed, `aligned crops differ by ${aligned.toFixed(1)}, box crops by ${boxed.toFixed(1)} grey levels`);
});

test.run();

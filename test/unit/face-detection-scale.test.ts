import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { detectionSize, toFramePixels, toScaledYunetInput } from '../../actors/face/detection-scale.ts';
import type { Face } from '../../actors/face/face.ts';

test('the detection picture keeps the aspect, is never scaled up, and 0 means the frame as it is', () => {
  assert.equal(detectionSize({ width: 640, height: 360 }, 320), { width: 320, height: 180 });
  assert.equal(detectionSize({ width: 640, height: 426 }, 320), { width: 320, height: 213 });
  assert.equal(detectionSize({ width: 640, height: 360 }, 448), { width: 448, height: 252 });
  assert.equal(detectionSize({ width: 300, height: 200 }, 320), { width: 300, height: 200 });
  assert.equal(detectionSize({ width: 640, height: 360 }, 0), { width: 640, height: 360 });
});

test('faces found on the smaller picture land on the same place of the frame, landmarks too', () => {
  const face: Face = { x: 10, y: 20, width: 40, height: 50, score: 0.9, landmarks: [[20, 30], [40, 30], [30, 45], [22, 60], [38, 60]] };
  const [mapped] = toFramePixels([face], { width: 320, height: 180 }, { width: 640, height: 360 });
  assert.equal(mapped, { x: 20, y: 40, width: 80, height: 100, score: 0.9, landmarks: [[40, 60], [80, 60], [60, 90], [44, 120], [76, 120]] });
  // Edges map to edges: a box over the whole small picture covers the whole frame.
  const whole: Face = { x: 0, y: 0, width: 320, height: 213, score: 1, landmarks: [] };
  const [frame] = toFramePixels([whole], { width: 320, height: 213 }, { width: 640, height: 426 });
  assert.equal([frame!.x, frame!.y, frame!.width, frame!.height], [0, 0, 640, 426]);
});

test('at the same size the faces are returned as they are', () => {
  const face: Face = { x: 1, y: 2, width: 3, height: 4, score: 0.7, landmarks: [[1, 2]] };
  assert.equal(toFramePixels([face], { width: 64, height: 32 }, { width: 64, height: 32 }), [face]);
});

test('halving averages each 2x2 block into BGR planes, padded with zeros', () => {
  // 4x2 RGB frame: two 2x2 blocks, left (10,20,30)/(30,40,50) mixed, right constant (200,100,0).
  const rgb = Uint8Array.from([
    10, 20, 30, 30, 40, 50, 200, 100, 0, 200, 100, 0,
    10, 20, 30, 30, 40, 50, 200, 100, 0, 200, 100, 0,
  ]);
  const padW = 4;
  const padH = 2;
  const out = new Float32Array(3 * padW * padH).fill(-1);
  toScaledYunetInput(rgb, { width: 4, height: 2 }, { width: 2, height: 1 }, out, padW, padH);
  const plane = padW * padH;
  const at = (channel: number, x: number, y: number) => out[channel * plane + y * padW + x];
  // Planes are B, G, R.
  assert.equal([at(0, 0, 0), at(1, 0, 0), at(2, 0, 0)], [40, 30, 20]);
  assert.equal([at(0, 1, 0), at(1, 1, 0), at(2, 1, 0)], [0, 100, 200]);
  for (let channel = 0; channel < 3; channel++) {
    assert.equal([at(channel, 2, 0), at(channel, 3, 0), at(channel, 0, 1), at(channel, 3, 1)], [0, 0, 0, 0]);
  }
});

test.run();

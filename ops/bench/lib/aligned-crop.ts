// Crops the expression benchmarks compare with the service's box crop (actors/face/crop.ts);
// measured and left out of the service (ops/bench/README-expressions.md):
// - cropAligned: a square placed by the eyes (alignedGeometry): rotated so the eyes are level,
//   its side a fixed multiple of the eye distance, so a tilted or nearer face gives the same
//   picture as an upright one. On upright frontal faces it frames what cropFace frames.
// - mirrorCrop: the mirror image of a crop in another slot (flip averaging).
// Written into one slot of an NCHW RGB float32 batch, raw 0..255, like cropFace.
import { checkSide, CROP_SIDE } from '../../../actors/face/index.ts';

/** A square cut from the frame: centre and side in frame pixels, and the direction of its x axis (radians, clockwise on screen). */
export interface CropGeometry {
  cx: number;
  cy: number;
  side: number;
  angle: number;
}

// Measured on YuNet's boxes and landmarks of upright frontal faces (the test photos, 13 faces):
// box side / eye distance 2.6-3.2 (mean 2.9); box centre 0.22-0.43 (mean 0.33) eye distances
// below the midpoint of the eyes, along the face's vertical axis; eyes-to-mouth / eye distance 0.87-1.16.
const SIDE_PER_LENGTH = 2.9;
const CENTRE_BELOW_EYES = 0.33;
// A face turned sideways has its eyes closer together: the length never falls below this share
// of the eyes-to-mouth distance, which turning leaves as it is.
const MOUTH_FLOOR = 0.8;

/**
 * Where the aligned crop of a face lies, from YuNet's landmarks (right eye, left eye, nose,
 * right and left mouth corners): rotated so the eyes are level, centred below the eyes, its side
 * proportional to the eye distance. `zoom` scales the side (1 frames what the box frames).
 */
export function alignedGeometry(landmarks: readonly (readonly [number, number])[], zoom = 1): CropGeometry {
  const [eyeA, eyeB, , mouthA, mouthB] = landmarks;
  if (!eyeA || !eyeB || !mouthA || !mouthB) throw new Error('five landmarks expected');
  let dx = eyeB[0] - eyeA[0];
  let dy = eyeB[1] - eyeA[1];
  // Level eyes whichever eye comes first: the crop's x axis points to the right of the frame.
  if (dx < 0) {
    dx = -dx;
    dy = -dy;
  }
  const eyeDistance = Math.hypot(dx, dy);
  const eyesX = (eyeA[0] + eyeB[0]) / 2;
  const eyesY = (eyeA[1] + eyeB[1]) / 2;
  const mouthDistance = Math.hypot((mouthA[0] + mouthB[0]) / 2 - eyesX, (mouthA[1] + mouthB[1]) / 2 - eyesY);
  const length = Math.max(eyeDistance, MOUTH_FLOOR * mouthDistance);
  if (!(length > 0)) throw new Error('landmarks coincide');
  const angle = Math.atan2(dy, dx);
  // The face's "down" is the crop's y axis: (-sin, cos) in the frame.
  const below = CENTRE_BELOW_EYES * length;
  return { cx: eyesX - Math.sin(angle) * below, cy: eyesY + Math.cos(angle) * below, side: SIDE_PER_LENGTH * length * zoom, angle };
}

/** Samples the square `geometry` of the frame into slot `slot`, bilinearly; outside the frame the edge pixels repeat. */
export function cropAligned(rgb: Uint8Array, width: number, height: number, geometry: CropGeometry, batch: Float32Array, slot: number, side = CROP_SIDE): void {
  checkSide(side);
  const step = geometry.side / side;
  const cos = Math.cos(geometry.angle) * step;
  const sin = Math.sin(geometry.angle) * step;
  // Frame position (pixel-centre convention) of the crop's pixel (0, 0): its centre lies half a
  // step from the corner.
  const half = side / 2 - 0.5;
  const originX = geometry.cx - half * cos + half * sin - 0.5;
  const originY = geometry.cy - half * sin - half * cos - 0.5;
  const plane = side * side;
  const base = slot * 3 * plane;
  const maxX = width - 1;
  const maxY = height - 1;
  for (let v = 0; v < side; v++) {
    let x = originX - v * sin;
    let y = originY + v * cos;
    for (let u = 0; u < side; u++, x += cos, y += sin) {
      const sx = x < 0 ? 0 : x > maxX ? maxX : x;
      const sy = y < 0 ? 0 : y > maxY ? maxY : y;
      const x0 = Math.floor(sx);
      const y0 = Math.floor(sy);
      const wx = sx - x0;
      const wy = sy - y0;
      const x1 = x0 < maxX ? x0 + 1 : x0;
      const y1 = y0 < maxY ? y0 + 1 : y0;
      const a = (y0 * width + x0) * 3;
      const b = (y0 * width + x1) * 3;
      const c = (y1 * width + x0) * 3;
      const d = (y1 * width + x1) * 3;
      const out = base + v * side + u;
      for (let ch = 0; ch < 3; ch++) {
        const topValue = rgb[a + ch]! + (rgb[b + ch]! - rgb[a + ch]!) * wx;
        const bottomValue = rgb[c + ch]! + (rgb[d + ch]! - rgb[c + ch]!) * wx;
        batch[out + ch * plane] = topValue + (bottomValue - topValue) * wy;
      }
    }
  }
}

/** Writes the left-right mirror image of the crop in slot `from` into slot `to`. */
export function mirrorCrop(batch: Float32Array, from: number, to: number, side = CROP_SIDE): void {
  const plane = side * side;
  const source = from * 3 * plane;
  const target = to * 3 * plane;
  for (let row = 0; row < 3 * side; row++) {
    const s = source + row * side;
    const t = target + row * side + side - 1;
    for (let x = 0; x < side; x++) batch[t - x] = batch[s + x]!;
  }
}

// Face crops for the expression model, written into one slot of an NCHW RGB float32 batch,
// raw 0..255, resized bilinearly to side x side (112 for face-api's net): a square around the
// box centre (side = the box's longer side, clamped to the frame), axis-aligned.
import type { Box } from './box.ts';

export const CROP_SIDE = 112;
export const CROP_VALUES = 3 * CROP_SIDE * CROP_SIDE;

/** Values of one crop of `side` x `side` pixels. */
export function cropValues(side: number): number {
  return 3 * side * side;
}

// Per-column and per-row sampling tables, shared: a crop runs synchronously start to end.
const col0 = new Int32Array(CROP_SIDE);
const col1 = new Int32Array(CROP_SIDE);
const colWeight = new Float32Array(CROP_SIDE);
const row0 = new Int32Array(CROP_SIDE);
const row1 = new Int32Array(CROP_SIDE);
const rowWeight = new Float32Array(CROP_SIDE);

export function cropFace(rgb: Uint8Array, width: number, height: number, box: Box, batch: Float32Array, slot: number, side = CROP_SIDE): void {
  checkSide(side);
  const square = Math.max(box.width, box.height);
  const cx = box.x + box.width / 2;
  const cy = box.y + box.height / 2;
  const left = Math.max(0, cx - square / 2);
  const top = Math.max(0, cy - square / 2);
  const right = Math.min(width, cx + square / 2);
  const bottom = Math.min(height, cy + square / 2);
  if (right <= left || bottom <= top) throw new Error('face box lies outside the frame');
  samplingTable(left, right - left, width, side, col0, col1, colWeight);
  samplingTable(top, bottom - top, height, side, row0, row1, rowWeight);

  const plane = side * side;
  const base = slot * 3 * plane;
  for (let y = 0; y < side; y++) {
    const upper = row0[y]! * width;
    const lower = row1[y]! * width;
    const wy = rowWeight[y]!;
    for (let x = 0; x < side; x++) {
      const a = (upper + col0[x]!) * 3;
      const b = (upper + col1[x]!) * 3;
      const c = (lower + col0[x]!) * 3;
      const d = (lower + col1[x]!) * 3;
      const wx = colWeight[x]!;
      const out = base + y * side + x;
      for (let ch = 0; ch < 3; ch++) {
        const topValue = rgb[a + ch]! + (rgb[b + ch]! - rgb[a + ch]!) * wx;
        const bottomValue = rgb[c + ch]! + (rgb[d + ch]! - rgb[c + ch]!) * wx;
        batch[out + ch * plane] = topValue + (bottomValue - topValue) * wy;
      }
    }
  }
}

// Pixel centres map to pixel centres (half-pixel convention), clamped to the frame's edge.
function samplingTable(start: number, length: number, limit: number, side: number, lo: Int32Array, hi: Int32Array, weight: Float32Array): void {
  const scale = length / side;
  for (let i = 0; i < side; i++) {
    const at = Math.min(Math.max(start + (i + 0.5) * scale - 0.5, 0), limit - 1);
    const first = Math.floor(at);
    lo[i] = first;
    hi[i] = Math.min(first + 1, limit - 1);
    weight[i] = at - first;
  }
}

/** A side the crops (and cropFace's sampling tables) can take. */
export function checkSide(side: number): void {
  if (!Number.isInteger(side) || side < 1 || side > CROP_SIDE) throw new Error(`crop side ${side} is not 1..${CROP_SIDE}`);
}

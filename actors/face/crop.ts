// Face crops for the expression model: a square around the box centre (side = the box's
// longer side, clamped to the frame), resized bilinearly to 112x112 into one slot of an
// NCHW RGB float32 batch, raw 0..255.
import type { Box } from './box.ts';

export const CROP_SIDE = 112;
export const CROP_VALUES = 3 * CROP_SIDE * CROP_SIDE;

// Per-column and per-row sampling tables, shared: a crop runs synchronously start to end.
const col0 = new Int32Array(CROP_SIDE);
const col1 = new Int32Array(CROP_SIDE);
const colWeight = new Float32Array(CROP_SIDE);
const row0 = new Int32Array(CROP_SIDE);
const row1 = new Int32Array(CROP_SIDE);
const rowWeight = new Float32Array(CROP_SIDE);

export function cropFace(rgb: Uint8Array, width: number, height: number, box: Box, batch: Float32Array, slot: number): void {
  const side = Math.max(box.width, box.height);
  const cx = box.x + box.width / 2;
  const cy = box.y + box.height / 2;
  const left = Math.max(0, cx - side / 2);
  const top = Math.max(0, cy - side / 2);
  const right = Math.min(width, cx + side / 2);
  const bottom = Math.min(height, cy + side / 2);
  if (right <= left || bottom <= top) throw new Error('face box lies outside the frame');
  samplingTable(left, right - left, width, col0, col1, colWeight);
  samplingTable(top, bottom - top, height, row0, row1, rowWeight);

  const plane = CROP_SIDE * CROP_SIDE;
  const base = slot * CROP_VALUES;
  for (let y = 0; y < CROP_SIDE; y++) {
    const upper = row0[y]! * width;
    const lower = row1[y]! * width;
    const wy = rowWeight[y]!;
    for (let x = 0; x < CROP_SIDE; x++) {
      const a = (upper + col0[x]!) * 3;
      const b = (upper + col1[x]!) * 3;
      const c = (lower + col0[x]!) * 3;
      const d = (lower + col1[x]!) * 3;
      const wx = colWeight[x]!;
      const out = base + y * CROP_SIDE + x;
      for (let ch = 0; ch < 3; ch++) {
        const topValue = rgb[a + ch]! + (rgb[b + ch]! - rgb[a + ch]!) * wx;
        const bottomValue = rgb[c + ch]! + (rgb[d + ch]! - rgb[c + ch]!) * wx;
        batch[out + ch * plane] = topValue + (bottomValue - topValue) * wy;
      }
    }
  }
}

// Pixel centres map to pixel centres (half-pixel convention), clamped to the frame's edge.
function samplingTable(start: number, length: number, limit: number, lo: Int32Array, hi: Int32Array, weight: Float32Array): void {
  const scale = length / CROP_SIDE;
  for (let i = 0; i < CROP_SIDE; i++) {
    const at = Math.min(Math.max(start + (i + 0.5) * scale - 0.5, 0), limit - 1);
    const first = Math.floor(at);
    lo[i] = first;
    hi[i] = Math.min(first + 1, limit - 1);
    weight[i] = at - first;
  }
}

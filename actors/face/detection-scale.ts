// Face detection on a smaller picture than the frame: YuNet's cost follows the pixels it is
// given (ops/bench/README-capacity.md), while the expression crops need the frame's own
// detail. So the detector reads the frame scaled down, and its faces are mapped back to frame
// pixels, where the crops are cut.
import type { Face } from './face.ts';

export interface Size {
  width: number;
  height: number;
}

/** The picture YuNet is given: at most `maxWidth` wide (0: no limit), aspect kept, never scaled up. */
export function detectionSize(frame: Size, maxWidth: number): Size {
  if (maxWidth <= 0 || frame.width <= maxWidth) return { width: frame.width, height: frame.height };
  return { width: maxWidth, height: Math.max(1, Math.round((frame.height * maxWidth) / frame.width)) };
}

/**
 * Writes the RGB24 frame scaled bilinearly to `size` as planar BGR float32 (raw 0..255), zero-padded
 * to padW x padH: YuNet's input, in one pass with no intermediate picture. Pixel centres map to
 * pixel centres, so halving averages each 2x2 block exactly.
 */
export function toScaledYunetInput(rgb: Uint8Array, frame: Size, size: Size, out: Float32Array, padW: number, padH: number): void {
  const cols = samplingTable(frame.width, size.width);
  const rows = samplingTable(frame.height, size.height);
  // Byte offsets of each column's two source pixels within a row.
  const left = cols.lo.map((x) => x * 3);
  const right = cols.hi.map((x) => x * 3);
  const across = cols.weight;
  const plane = padW * padH;
  out.fill(0, 0, 3 * plane);
  const rowBytes = frame.width * 3;
  for (let y = 0; y < size.height; y++) {
    const upper = rows.lo[y]! * rowBytes;
    const lower = rows.hi[y]! * rowBytes;
    const wy = rows.weight[y]!;
    // RGB in, BGR planes out.
    let blue = y * padW;
    let green = plane + blue;
    let red = 2 * plane + blue;
    for (let x = 0; x < size.width; x++, blue++, green++, red++) {
      const wx = across[x]!;
      const a = upper + left[x]!;
      const b = upper + right[x]!;
      const c = lower + left[x]!;
      const d = lower + right[x]!;
      let top = rgb[a]! + (rgb[b]! - rgb[a]!) * wx;
      out[red] = top + (rgb[c]! + (rgb[d]! - rgb[c]!) * wx - top) * wy;
      top = rgb[a + 1]! + (rgb[b + 1]! - rgb[a + 1]!) * wx;
      out[green] = top + (rgb[c + 1]! + (rgb[d + 1]! - rgb[c + 1]!) * wx - top) * wy;
      top = rgb[a + 2]! + (rgb[b + 2]! - rgb[a + 2]!) * wx;
      out[blue] = top + (rgb[c + 2]! + (rgb[d + 2]! - rgb[c + 2]!) * wx - top) * wy;
    }
  }
}

function samplingTable(from: number, to: number): { lo: Int32Array; hi: Int32Array; weight: Float64Array } {
  const lo = new Int32Array(to);
  const hi = new Int32Array(to);
  const weight = new Float64Array(to);
  const scale = from / to;
  for (let i = 0; i < to; i++) {
    const at = Math.min(Math.max((i + 0.5) * scale - 0.5, 0), from - 1);
    lo[i] = Math.floor(at);
    hi[i] = Math.min(lo[i]! + 1, from - 1);
    weight[i] = at - lo[i]!;
  }
  return { lo, hi, weight };
}

/** Faces found on the picture of `size`, in the pixels of `frame`: boxes and landmarks alike (edges map to edges). */
export function toFramePixels(faces: readonly Face[], size: Size, frame: Size): Face[] {
  const sx = frame.width / size.width;
  const sy = frame.height / size.height;
  if (sx === 1 && sy === 1) return [...faces];
  return faces.map((face) => ({
    x: face.x * sx,
    y: face.y * sy,
    width: face.width * sx,
    height: face.height * sy,
    score: face.score,
    landmarks: face.landmarks.map(([x, y]) => [x * sx, y * sy] as [number, number]),
  }));
}

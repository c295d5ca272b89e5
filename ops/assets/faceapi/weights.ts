// Reads TensorFlow.js weights: a JSON manifest of weight groups, each stored as one or more
// binary shards beside the manifest, tensors packed back to back in manifest order.
// Quantized tensors are expanded to float32 the way TensorFlow.js does on load.
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

export interface Weight {
  shape: number[];
  values: Float32Array;
}

export interface ManifestEntry {
  name: string;
  shape: number[];
  dtype: string;
  quantization?: { dtype: string; scale?: number; min?: number };
}

export interface ManifestGroup {
  paths: string[];
  weights: ManifestEntry[];
}

export async function readTfjsWeights(manifestPath: string): Promise<Map<string, Weight>> {
  const groups = JSON.parse(await readFile(manifestPath, 'utf8')) as ManifestGroup[];
  return readWeightGroups(groups, dirname(manifestPath));
}

/** The weights of a manifest's groups (a graph model's `weightsManifest`), shards read from `dir`. */
export async function readWeightGroups(groups: readonly ManifestGroup[], dir: string): Promise<Map<string, Weight>> {
  const weights = new Map<string, Weight>();
  for (const group of groups) {
    const shards = await Promise.all(group.paths.map((path) => readFile(join(dir, path))));
    const data = Buffer.concat(shards);
    let offset = 0;
    for (const entry of group.weights) {
      const count = entry.shape.reduce((product, size) => product * size, 1);
      const bytes = count * bytesPerValue(entry);
      if (offset + bytes > data.length) throw new Error(`weights file ends inside ${entry.name}`);
      weights.set(entry.name, { shape: entry.shape, values: decode(entry, new DataView(data.buffer, data.byteOffset + offset, bytes), count) });
      offset += bytes;
    }
    if (offset !== data.length) throw new Error(`weights of ${group.paths.join(', ')} have ${data.length - offset} bytes left over`);
  }
  return weights;
}

function bytesPerValue(entry: ManifestEntry): number {
  const dtype = entry.quantization?.dtype ?? entry.dtype;
  switch (dtype) {
    case 'uint8':
      return 1;
    case 'uint16':
    case 'float16':
      return 2;
    case 'float32':
    case 'int32':
      return 4;
    default:
      throw new Error(`${entry.name}: unsupported dtype ${dtype}`);
  }
}

function decode(entry: ManifestEntry, view: DataView, count: number): Float32Array {
  const values = new Float32Array(count);
  const quantization = entry.quantization;
  if (quantization?.dtype === 'uint8' || quantization?.dtype === 'uint16') {
    const { scale, min } = quantization;
    if (scale === undefined || min === undefined) throw new Error(`${entry.name}: quantization without scale and min`);
    const wide = quantization.dtype === 'uint16';
    // In double precision, then rounded once to float32, as TensorFlow.js does.
    for (let i = 0; i < count; i++) values[i] = (wide ? view.getUint16(2 * i, true) : view.getUint8(i)) * scale + min;
  } else if (quantization?.dtype === 'float16') {
    for (let i = 0; i < count; i++) values[i] = halfToFloat(view.getUint16(2 * i, true));
  } else if (entry.dtype === 'int32') {
    for (let i = 0; i < count; i++) values[i] = view.getInt32(4 * i, true);
  } else {
    for (let i = 0; i < count; i++) values[i] = view.getFloat32(4 * i, true);
  }
  return values;
}

function halfToFloat(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  const fraction = bits & 0x3ff;
  if (exponent === 0) return sign * fraction * 2 ** -24;
  if (exponent === 0x1f) return fraction ? NaN : sign * Infinity;
  return sign * (1 + fraction / 1024) * 2 ** (exponent - 15);
}

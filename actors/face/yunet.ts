// YuNet face detection: frame -> network input, network output -> faces.
// The model takes any size that is a multiple of 32, so its input is padded to one. The frame
// goes in as it is, or scaled down to a width limit (detection-scale.ts); faces come back in
// frame pixels either way.
import { Batcher, concat } from '../models/batcher.ts';
import type { InferenceTimer } from '../models/inference-timer.ts';
import { ort } from '../models/onnx.ts';
import { detectionSize, toFramePixels, toScaledYunetInput } from './detection-scale.ts';
import type { Face } from './face.ts';
import { nms } from './nms.ts';

const SCORE_THRESHOLD = 0.6;
const NMS_IOU = 0.3;
const STRIDES = [8, 16, 32] as const;

const ALIGN = 32;

export function paddedSize(length: number): number {
  return Math.ceil(length / ALIGN) * ALIGN;
}

/** Writes an RGB24 frame as planar BGR float32 (raw 0..255), zero-padded to padW x padH. */
export function toYunetInput(rgb: Uint8Array, width: number, height: number, out: Float32Array, padW: number, padH: number): void {
  const plane = padW * padH;
  for (let y = 0; y < padH; y++) {
    const row = y * padW;
    if (y >= height) {
      out.fill(0, row, row + padW);
      out.fill(0, plane + row, plane + row + padW);
      out.fill(0, 2 * plane + row, 2 * plane + row + padW);
      continue;
    }
    let src = y * width * 3;
    for (let x = 0; x < width; x++, src += 3) {
      out[row + x] = rgb[src + 2]!;
      out[plane + row + x] = rgb[src + 1]!;
      out[2 * plane + row + x] = rgb[src]!;
    }
    out.fill(0, row + width, row + padW);
    out.fill(0, plane + row + width, plane + row + padW);
    out.fill(0, 2 * plane + row + width, 2 * plane + row + padW);
  }
}

/** The twelve output tensors of one image, by output name (`cls_8`, `obj_8`, `bbox_8`, `kps_8`, ...). */
export type YunetOutputs = Readonly<Record<string, Float32Array>>;

/** Turns raw outputs for an input of padW x padH into faces above the threshold, after NMS. */
export function decodeYunet(outputs: YunetOutputs, padW: number, padH: number, scoreThreshold = SCORE_THRESHOLD): Face[] {
  // sqrt(cls * obj) >= t  <=>  cls * obj >= t^2: the square root is only taken for survivors.
  const minProduct = scoreThreshold * scoreThreshold;
  const candidates: Face[] = [];
  for (const stride of STRIDES) {
    const cls = output(outputs, `cls_${stride}`);
    const obj = output(outputs, `obj_${stride}`);
    const bbox = output(outputs, `bbox_${stride}`);
    const kps = output(outputs, `kps_${stride}`);
    const cols = padW / stride;
    const rows = padH / stride;
    for (let row = 0; row < rows; row++) {
      for (let col = 0; col < cols; col++) {
        const i = row * cols + col;
        const product = clamp01(cls[i]!) * clamp01(obj[i]!);
        if (product < minProduct) continue;
        const cx = (col + bbox[i * 4]!) * stride;
        const cy = (row + bbox[i * 4 + 1]!) * stride;
        const w = Math.exp(bbox[i * 4 + 2]!) * stride;
        const h = Math.exp(bbox[i * 4 + 3]!) * stride;
        const landmarks: [number, number][] = [];
        for (let k = 0; k < 5; k++) {
          landmarks.push([(kps[i * 10 + 2 * k]! + col) * stride, (kps[i * 10 + 2 * k + 1]! + row) * stride]);
        }
        candidates.push({ x: cx - w / 2, y: cy - h / 2, width: w, height: h, score: Math.sqrt(product), landmarks });
      }
    }
  }
  return nms(candidates, NMS_IOU);
}

function output(outputs: YunetOutputs, name: string): Float32Array {
  const data = outputs[name];
  if (!data) throw new Error(`YuNet output ${name} missing`);
  return data;
}

function clamp01(v: number): number {
  return v < 0 ? 0 : v > 1 ? 1 : v;
}

const MAX_FRAMES_PER_CALL = 16;

interface DetectorInput {
  input: Float32Array;
  padW: number;
  padH: number;
  spent?: WorkMeter;
}

/** Hears the thread's seconds of work on one request: its own preparation, its share of the model call. */
export type WorkMeter = (seconds: number) => void;

/** YuNet over every session of a host: frames of the same padded size go through the model together. */
export class FaceDetector {
  private readonly batcher: Batcher<DetectorInput, Face[]>;
  // Input buffers are reused across frames; a buffer is lent to one request at a time, so
  // concurrent callers (several sessions) never share one while the model reads it.
  private readonly spareInputs: Float32Array[] = [];

  constructor(
    private readonly model: ort.InferenceSession,
    private readonly timer?: InferenceTimer,
    /** Frames wider than this are detected on a copy scaled down to it (0: at their own size). */
    private readonly maxWidth = 0,
  ) {
    this.batcher = new Batcher<DetectorInput, Face[]>(
      (group) => this.detect(group),
      (group, next) => group.length < MAX_FRAMES_PER_CALL && group[0]!.padW === next.padW && group[0]!.padH === next.padH,
    );
  }

  /** How detection was grouped: model calls made and frames they carried, since start. */
  get stats() {
    return this.batcher.stats;
  }

  /**
   * `maxWidth`: this frame's detection width, when the face thread has reduced its effort
   * (FaceEffort); `spent`: hears this frame's share of the work (a batch's call split evenly
   * among its frames, which are of one size).
   */
  async detectFaces(rgb: Uint8Array, width: number, height: number, maxWidth = this.maxWidth, spent?: WorkMeter): Promise<Face[]> {
    if (rgb.length < width * height * 3) throw new Error(`frame of ${rgb.length} bytes is smaller than ${width}x${height} RGB`);
    const started = performance.now();
    const frame = { width, height };
    const size = detectionSize(frame, maxWidth);
    const padW = paddedSize(size.width);
    const padH = paddedSize(size.height);
    const values = 3 * padW * padH;
    let buffer = this.spareInputs.pop();
    if (!buffer || buffer.length < values) buffer = new Float32Array(values);
    try {
      const input = buffer.subarray(0, values);
      if (size.width === width) toYunetInput(rgb, width, height, input, padW, padH);
      else toScaledYunetInput(rgb, frame, size, input, padW, padH);
      spent?.((performance.now() - started) / 1000);
      const faces = await this.batcher.submit({ input, padW, padH, spent });
      return size.width === width ? faces : toFramePixels(faces, size, frame);
    } finally {
      this.spareInputs.push(buffer);
    }
  }

  private async detect(group: DetectorInput[]): Promise<Face[][]> {
    const { padW, padH } = group[0]!;
    const input = group.length === 1 ? group[0]!.input : concat(group.map((g) => g.input), group.length * 3 * padW * padH);
    const done = this.timer?.('face_detector');
    const started = performance.now();
    const results = await this.model.run({ input: new ort.Tensor('float32', input, [group.length, 3, padH, padW]) });
    const share = (performance.now() - started) / 1000 / group.length;
    done?.();
    return group.map(({ spent }, frame) => {
      const decoding = performance.now();
      const outputs: Record<string, Float32Array> = {};
      for (const [name, tensor] of Object.entries(results)) {
        const data = tensor.data as Float32Array;
        const perFrame = data.length / group.length;
        outputs[name] = data.subarray(frame * perFrame, (frame + 1) * perFrame);
      }
      const faces = decodeYunet(outputs, padW, padH);
      spent?.(share + (performance.now() - decoding) / 1000);
      return faces;
    });
  }
}

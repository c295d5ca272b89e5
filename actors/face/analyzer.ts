// The face analysis of one session: detect -> track -> classify -> per-second rows.
// One frame is analysed at a time and at most one waits: a frame offered while another
// waits replaces it, and the replaced one is counted as dropped, so a slow host falls
// behind by at most one frame instead of queueing without bound.
import type { FaceSecond, VideoSecond } from '../../bus/contracts/rows.ts';
import { config } from '../../bus/config.ts';
import { MODEL_FILES } from '../models/files.ts';
import { loadModel } from '../models/onnx.ts';
import { CROP_VALUES, cropFace } from './crop.ts';
import { CLASS_COUNT, classifyExpressions } from './expressions.ts';
import { SecondAggregator, type TrackedExpression } from './seconds.ts';
import { Tracker } from './tracker.ts';
import { detectFaces } from './yunet.ts';

export interface Frame {
  /** RGB24, row-major; the analyzer reads it later, so the caller must not reuse the buffer. */
  rgb: Uint8Array;
  width: number;
  height: number;
  /** Whole seconds since the session's start. */
  second: number;
}

export interface FaceAnalyzerOptions {
  session: string;
  onFaceSecond(row: FaceSecond): void;
  onVideoSecond(row: VideoSecond): void;
}

// A track survives about one second without a matching face.
const MAX_MISSED_FRAMES = Math.max(1, Math.round(config.analysisFps));

export class FaceAnalyzer {
  private readonly tracker = new Tracker({ maxMissedFrames: MAX_MISSED_FRAMES });
  private readonly seconds: SecondAggregator;
  private crops = new Float32Array(4 * CROP_VALUES);
  private pending: Frame | undefined;
  private running: Promise<void> | undefined;
  private failure: unknown;

  private constructor(options: FaceAnalyzerOptions) {
    this.seconds = new SecondAggregator(options.session, options);
  }

  static async create(options: FaceAnalyzerOptions): Promise<FaceAnalyzer> {
    // Loading up front makes a missing or broken model file fail here, not mid-stream.
    await Promise.all([loadModel(MODEL_FILES.faceDetector), loadModel(MODEL_FILES.expressions)]);
    return new FaceAnalyzer(options);
  }

  /** Hands over the newest frame. Throws if an earlier analysis failed. */
  offer(frame: Frame): void {
    if (this.failure !== undefined) throw this.failure;
    if (this.running) {
      if (this.pending) this.seconds.addDropped(this.pending.second);
      this.pending = frame;
      return;
    }
    this.running = this.drain(frame);
  }

  /** Waits for the frames in hand, then emits every open second. */
  async flush(): Promise<void> {
    await this.running;
    if (this.failure !== undefined) throw this.failure;
    this.seconds.flush();
  }

  private async drain(first: Frame): Promise<void> {
    let frame: Frame | undefined = first;
    try {
      while (frame) {
        await this.analyse(frame);
        frame = this.pending;
        this.pending = undefined;
      }
    } catch (error) {
      this.failure = error;
      this.pending = undefined;
    } finally {
      this.running = undefined;
    }
  }

  private async analyse(frame: Frame): Promise<void> {
    const faces = await detectFaces(frame.rgb, frame.width, frame.height);
    if (faces.length * CROP_VALUES > this.crops.length) this.crops = new Float32Array(faces.length * 2 * CROP_VALUES);
    faces.forEach((face, slot) => cropFace(frame.rgb, frame.width, frame.height, face, this.crops, slot));
    const probabilities = await classifyExpressions(this.crops, faces.length);
    const tracks = this.tracker.update(faces);
    const tracked: TrackedExpression[] = tracks.map((track, i) => ({
      track,
      probabilities: probabilities.subarray(i * CLASS_COUNT, (i + 1) * CLASS_COUNT),
    }));
    this.seconds.addFrame(frame.second, tracked);
  }
}

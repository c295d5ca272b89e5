// The face analysis of one session: detect -> track -> classify -> per-second rows.
// One frame is analysed at a time and at most one waits: a frame offered while another
// waits replaces it, and the replaced one is counted as dropped, so a slow host falls
// behind by at most one frame instead of queueing without bound.
import type { FaceSecond, VideoSecond } from '../../bus/contracts/rows.ts';
import type { FaceModels } from '../models/analysis-models.ts';
import { CROP_VALUES, cropFace } from './crop.ts';
import { CLASS_COUNT } from './expressions.ts';
import { SecondAggregator, type TrackedExpression } from './seconds.ts';
import { Tracker } from './tracker.ts';

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
  /** The host's shared detector and classifier. */
  models: FaceModels;
  /** Frames analysed per second: a track survives about one second without a matching face. */
  fps: number;
  onFaceSecond(row: FaceSecond): void;
  onVideoSecond(row: VideoSecond): void;
}

export class FaceAnalyzer {
  private readonly tracker: Tracker;
  private readonly seconds: SecondAggregator;
  private readonly models: FaceModels;
  private crops = new Float32Array(4 * CROP_VALUES);
  private pending: Frame | undefined;
  private running: Promise<void> | undefined;
  private failure: unknown;

  constructor(options: FaceAnalyzerOptions) {
    this.models = options.models;
    this.tracker = new Tracker({ maxMissedFrames: Math.max(1, Math.round(options.fps)) });
    this.seconds = new SecondAggregator(options.session, options);
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
    const faces = await this.models.detector.detectFaces(frame.rgb, frame.width, frame.height);
    if (faces.length * CROP_VALUES > this.crops.length) this.crops = new Float32Array(faces.length * 2 * CROP_VALUES);
    faces.forEach((face, slot) => cropFace(frame.rgb, frame.width, frame.height, face, this.crops, slot));
    const probabilities = await this.models.classifier.classifyExpressions(this.crops, faces.length);
    const tracks = this.tracker.update(faces);
    const tracked: TrackedExpression[] = tracks.map((track, i) => ({
      track,
      probabilities: probabilities.subarray(i * CLASS_COUNT, (i + 1) * CLASS_COUNT),
    }));
    this.seconds.addFrame(frame.second, tracked);
  }
}

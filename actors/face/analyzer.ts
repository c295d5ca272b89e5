// The face analysis of one session: detect -> track -> classify the faces due (ClassifyCadence;
// ExpressionReader: crop, classifier) -> per-second rows.
// One frame is analysed at a time and at most one waits: a frame offered while another
// waits replaces it, and the replaced one is counted as dropped, so a slow host falls
// behind by at most one frame instead of queueing without bound.
import type { FaceSecond, VideoSecond } from '../../bus/contracts/rows.ts';
import type { FaceModels } from './analysis-models.ts';
import { ClassifyCadence } from './classify-cadence.ts';
import { ExpressionReader, type ExpressionReading } from './expression-reader.ts';
import { CLASS_COUNT } from './expressions.ts';
import type { StreamEffort } from './face-effort.ts';
import { SecondAggregator, type TrackedExpression } from './seconds.ts';
import { Tracker, UNTRACKED } from './tracker.ts';
import type { WorkMeter } from './yunet.ts';

/** A track outlives this long without its face: small, dim faces go unfound for a second at times. */
const TRACK_MEMORY_SECONDS = 2;

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
  /** Frames analysed per second: a track survives TRACK_MEMORY_SECONDS of them without a matching face. */
  fps: number;
  /**
   * The effort the face thread gives this stream (FaceEffort), told of its frames and tracked
   * faces; absent: always full effort. A benchmark holds one step (`current` alone).
   */
  effort?: Pick<StreamEffort, 'current' | 'offered'> & Partial<Pick<StreamEffort, 'level' | 'tracked'>>;
  /** Hears the thread's work on this stream's frames (its share of the model calls): its cost. */
  spent?: WorkMeter;
  /** How expressions are read; absent: the service's ExpressionReader (a benchmark brings its variants). */
  expressions?: ExpressionReading;
  onFaceSecond(row: FaceSecond): void;
  onVideoSecond(row: VideoSecond): void;
}

export class FaceAnalyzer {
  private readonly tracker: Tracker;
  private readonly seconds: SecondAggregator;
  private readonly models: FaceModels;
  private readonly expressions: ExpressionReading;
  private readonly cadence = new ClassifyCadence();
  private readonly effort: FaceAnalyzerOptions['effort'];
  private readonly spent: WorkMeter | undefined;
  private pending: Frame | undefined;
  /** When the waiting frame was offered. */
  private pendingSince = 0;
  private running: Promise<void> | undefined;
  private failure: unknown;

  constructor(options: FaceAnalyzerOptions) {
    this.models = options.models;
    const maxMissedFrames = Math.max(1, Math.round(TRACK_MEMORY_SECONDS * options.fps));
    this.tracker = new Tracker({ maxMissedFrames });
    this.spent = options.spent;
    this.expressions = options.expressions ?? new ExpressionReader(options.models, options.spent);
    this.seconds = new SecondAggregator(options.session, options);
    this.effort = options.effort;
  }

  /** Hands over the newest frame. Throws if an earlier analysis failed. */
  offer(frame: Frame): void {
    if (this.failure !== undefined) throw this.failure;
    const now = performance.now();
    this.effort?.offered(this.pending !== undefined, now - this.pendingSince);
    if (this.running) {
      if (this.pending) this.seconds.addDropped(this.pending.second);
      this.pending = frame;
      this.pendingSince = now;
      return;
    }
    this.running = this.drain(frame);
  }

  /** Waits for the frames in hand, then emits every open second. */
  async flush(): Promise<void> {
    await this.idle();
    this.seconds.flush();
  }

  /** Waits for the frames in hand; the current second stays open (a replay that offers each frame in turn). */
  async idle(): Promise<void> {
    await this.running;
    if (this.failure !== undefined) throw this.failure;
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
    const effort = this.effort?.current;
    const level = this.effort?.level ?? 0;
    const found = await this.models.detector.detectFaces(frame.rgb, frame.width, frame.height, effort?.detectionWidth, this.spent);
    const ids = this.tracker.update(found);
    // A face the tracker does not follow is too unsure to be a person: it is neither read nor counted.
    const faces = found.filter((_, i) => ids[i] !== UNTRACKED);
    const tracks = ids.filter((id) => id !== UNTRACKED);
    this.effort?.tracked?.(faces.map((face) => face.width), frame);
    const due = this.cadence.due(frame.second, tracks, faces, effort?.classifyEvery);
    const all = due.length === faces.length;
    const answers = await this.expressions.read(frame, all ? faces : due.map((i) => faces[i]!), all ? tracks : due.map((i) => tracks[i]!));
    const probabilities = this.cadence.merge(frame.second, tracks, faces, due, answers);
    const tracked: TrackedExpression[] = tracks.map((track, i) => ({
      track,
      probabilities: probabilities.subarray(i * CLASS_COUNT, (i + 1) * CLASS_COUNT),
    }));
    this.seconds.addFrame(frame.second, tracked, level);
  }
}

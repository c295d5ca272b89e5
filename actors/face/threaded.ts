// Face analysis on a thread of its own, shared by every session of the host (face-thread.ts).
import type { FaceSecond, VideoSecond } from '../../bus/contracts/rows.ts';
import type { ModelName } from '../models/inference-timer.ts';
import { StreamThread } from '../models/stream-thread.ts';
import type { Frame } from './analyzer.ts';
import type { Effort } from './face-effort.ts';
import type { FaceReply, FaceRequest, FaceThreadData, WeighedSession } from './face-thread.ts';

export interface FaceStreamHandlers {
  onFaceSecond(row: FaceSecond): void;
  onVideoSecond(row: VideoSecond): void;
  /** The stream's analysis failed; it takes no more frames. */
  onFailed(error: Error): void;
  /** About once a second: the face thread's CPU seconds spent on this stream since the last call. */
  onCpu?(seconds: number): void;
}

/** One stream's face analysis, in the thread. */
export interface FaceStream {
  /** Hands the frame over: its pixels move to the thread, so the caller must not use them again. */
  offer(frame: Frame): void;
  /**
   * The host's word on the stream's cost: while over, the thread lowers its effort before any
   * other stream's, a step a second down to its floor, whether or not the thread is behind.
   */
  setOverBudget(over: boolean): void;
  /** Resolves once the frames handed over are analysed and every open second delivered. */
  close(): Promise<void>;
}

export interface FaceThreadOptions extends FaceThreadData {
  /** The thread's model calls, in seconds, for the host's metrics. */
  observeInference?(model: ModelName, seconds: number[]): void;
  /**
   * A stream of `session` is now analysed `level` steps below full effort (0: full), doing what
   * `effort` says; `before`: its level until now. A stream that ends below full effort says 0.
   * `chosenAmong`: lowered because the thread dropped frames, the streams it was the costliest of.
   */
  observeStreamEffort?(session: string, level: number, before: number, effort: Effort, chosenAmong?: WeighedSession[]): void;
  /**
   * The thread drops frames past its capacity bound with every stream at its floor (no stream
   * can go lower), or no longer: the host should admit no more sessions while it is. Called
   * when that changes; `detail` says why, for the log.
   */
  observeSaturated?(saturated: boolean, detail?: string): void;
}

export class FaceThread {
  private constructor(
    private readonly thread: StreamThread<FaceRequest, FaceReply>,
    private readonly observeStreamEffort: FaceThreadOptions['observeStreamEffort'],
  ) {}

  /** Starts the thread and waits until its models are loaded, so a broken model fails at start. */
  static async start(options: FaceThreadOptions): Promise<FaceThread> {
    const { modelsDir, effortCalmMs, observeInference, observeSaturated } = options;
    const data: FaceThreadData = { modelsDir, effortCalmMs };
    let saturatedNow = false;
    const thread = new StreamThread<FaceRequest, FaceReply>('face', new URL('./face-thread.ts', import.meta.url), data, {
      inference: observeInference,
      saturated: (saturated, detail) => {
        if (saturated === saturatedNow) return;
        saturatedNow = saturated;
        observeSaturated?.(saturated, detail);
      },
    });
    await thread.start();
    return new FaceThread(thread, options.observeStreamEffort);
  }

  /** `fps`: frames offered per second, by which a track outlives a missed face. */
  open(session: string, fps: number, handlers: FaceStreamHandlers): FaceStream {
    let level = 0;
    const effortIs = (next: number, effort: Effort, chosenAmong?: WeighedSession[]) => {
      if (next === level) return;
      this.observeStreamEffort?.(session, next, level, effort, chosenAmong);
      level = next;
    };
    // A stream that ends below full effort, however it ends, leaves the host's count of them.
    const ended = () => effortIs(0, { detectionWidth: 0, classifyEvery: 1 });
    const stream = this.thread.open(
      (reply) => {
        if (reply.type === 'face') handlers.onFaceSecond(reply.row);
        else if (reply.type === 'video') handlers.onVideoSecond(reply.row);
        else if (reply.type === 'effort') effortIs(reply.level, reply.effort, reply.chosenAmong);
        else handlers.onCpu?.(reply.seconds);
      },
      (error) => {
        ended();
        handlers.onFailed(error);
      },
    );
    stream.send({ type: 'open', stream: stream.id, session, fps });
    return {
      offer: ({ rgb, width, height, second }) => {
        // A frame from the ingest owns its whole buffer; anything else is copied before moving.
        const pixels = rgb.byteOffset === 0 && rgb.byteLength === rgb.buffer.byteLength ? rgb : new Uint8Array(rgb);
        stream.send({ type: 'frame', stream: stream.id, rgb: pixels, width, height, second }, [pixels.buffer as ArrayBuffer]);
      },
      setOverBudget: (over) => stream.send({ type: 'budget', stream: stream.id, over }),
      close: () => stream.close().finally(ended),
    };
  }

  close(): Promise<void> {
    return this.thread.close();
  }
}

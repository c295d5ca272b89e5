// Face analysis on a thread of its own, shared by every session of the host (face-thread.ts).
import type { FaceSecond, VideoSecond } from '../../bus/contracts/rows.ts';
import type { ModelName } from '../models/inference-timer.ts';
import { StreamThread } from '../models/stream-thread.ts';
import type { Frame } from './analyzer.ts';
import type { FaceReply, FaceRequest, FaceThreadData } from './face-thread.ts';

export interface FaceStreamHandlers {
  onFaceSecond(row: FaceSecond): void;
  onVideoSecond(row: VideoSecond): void;
  /** The stream's analysis failed; it takes no more frames. */
  onFailed(error: Error): void;
}

/** One stream's face analysis, in the thread. */
export interface FaceStream {
  /** Hands the frame over: its pixels move to the thread, so the caller must not use them again. */
  offer(frame: Frame): void;
  /** Resolves once the frames handed over are analysed and every open second delivered. */
  close(): Promise<void>;
}

export interface FaceThreadOptions extends FaceThreadData {
  /** The thread's model calls, in seconds, for the host's metrics. */
  observeInference?(model: ModelName, seconds: number[]): void;
  /** The thread now works `level` steps below full effort per frame (0: full), doing what `effort` says. */
  observeEffort?(level: number, effort?: Readonly<Record<string, number>>): void;
}

export class FaceThread {
  private constructor(private readonly thread: StreamThread<FaceRequest, FaceReply>) {}

  /** Starts the thread and waits until its models are loaded, so a broken model fails at start. */
  static async start(options: FaceThreadOptions): Promise<FaceThread> {
    const { modelsDir, effortCalmMs, observeInference, observeEffort } = options;
    const data: FaceThreadData = { modelsDir, effortCalmMs };
    const thread = new StreamThread<FaceRequest, FaceReply>('face', new URL('./face-thread.ts', import.meta.url), data, {
      inference: observeInference,
      effort: observeEffort,
    });
    await thread.start();
    return new FaceThread(thread);
  }

  /** `fps`: frames offered per second, by which a track outlives a missed face. */
  open(session: string, fps: number, handlers: FaceStreamHandlers): FaceStream {
    const stream = this.thread.open((reply) => {
      if (reply.type === 'face') handlers.onFaceSecond(reply.row);
      else handlers.onVideoSecond(reply.row);
    }, handlers.onFailed);
    stream.send({ type: 'open', stream: stream.id, session, fps });
    return {
      offer: ({ rgb, width, height, second }) => {
        // A frame from the ingest owns its whole buffer; anything else is copied before moving.
        const pixels = rgb.byteOffset === 0 && rgb.byteLength === rgb.buffer.byteLength ? rgb : new Uint8Array(rgb);
        stream.send({ type: 'frame', stream: stream.id, rgb: pixels, width, height, second }, [pixels.buffer as ArrayBuffer]);
      },
      close: () => stream.close(),
    };
  }

  close(): Promise<void> {
    return this.thread.close();
  }
}

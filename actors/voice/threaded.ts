// Voice analysis on a thread of its own, shared by every session of the host (voice-thread.ts).
import type { AudioSecond } from '../../bus/contracts/rows.ts';
import type { ModelName } from '../models/inference-timer.ts';
import { StreamThread } from '../models/stream-thread.ts';
import type { SpeechAudio } from './analyzer.ts';
import type { VoiceReply, VoiceRequest, VoiceThreadData } from './voice-thread.ts';

export interface VoiceStreamHandlers {
  onSecond(row: AudioSecond): void;
  onSegment(segment: SpeechAudio): void;
  /** A segment with `seconds` of speech was left untranscribed: the room talking while the speaker was silent. */
  onRoomSpeech?(seconds: number): void;
  /** Analysis fell behind and `seconds` of the oldest audio were skipped. */
  onShed(seconds: number): void;
  /** The stream's analysis failed; it takes no more audio. */
  onFailed(error: Error): void;
  /** About once a second: the voice thread's CPU seconds spent on this stream since the last call. */
  onCpu?(seconds: number): void;
}

/** One stream's voice analysis, in the thread. */
export interface VoiceStream {
  /** Raw 16 kHz mono s16le PCM. */
  write(chunk: Buffer): void;
  /** Resolves once everything written is analysed and the last second and segment delivered. */
  close(): Promise<void>;
}

export interface VoiceThreadOptions extends VoiceThreadData {
  /** The thread's model calls, in seconds, for the host's metrics. */
  observeInference?(model: ModelName, seconds: number[]): void;
}

export class VoiceThread {
  private constructor(private readonly thread: StreamThread<VoiceRequest, VoiceReply>) {}

  /** Starts the thread and waits until its model is loaded, so a broken model fails at start. */
  static async start(options: VoiceThreadOptions): Promise<VoiceThread> {
    const { modelsDir, maxBacklogSeconds, observeInference } = options;
    const data: VoiceThreadData = { modelsDir, maxBacklogSeconds };
    const thread = new StreamThread<VoiceRequest, VoiceReply>('voice', new URL('./voice-thread.ts', import.meta.url), data, { inference: observeInference });
    await thread.start();
    return new VoiceThread(thread);
  }

  /** `startOffset`: seconds since the session's start of the stream's first sample. */
  open(session: string, startOffset: number, handlers: VoiceStreamHandlers): VoiceStream {
    const stream = this.thread.open((reply) => {
      if (reply.type === 'second') handlers.onSecond(reply.row);
      else if (reply.type === 'segment') handlers.onSegment(reply.segment);
      else if (reply.type === 'shed') handlers.onShed(reply.seconds);
      else if (reply.type === 'room') handlers.onRoomSpeech?.(reply.seconds);
      else handlers.onCpu?.(reply.seconds);
    }, handlers.onFailed);
    stream.send({ type: 'open', stream: stream.id, session, startOffset });
    return {
      write: (chunk) => {
        const copy = new Uint8Array(chunk); // the pipe's buffer is not ours to hand over
        stream.send({ type: 'audio', stream: stream.id, chunk: copy }, [copy.buffer]);
      },
      close: () => stream.close(),
    };
  }

  close(): Promise<void> {
    return this.thread.close();
  }
}

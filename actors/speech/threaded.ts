// Speech-to-text on one model thread (StreamThread), one segment per call. If the thread dies,
// the calls in flight fail and the next call starts a fresh thread.
import type { SpeechModel } from '../models/files.ts';
import type { InferenceTimer } from '../models/inference-timer.ts';
import { StreamThread } from '../models/stream-thread.ts';
import type { Transcriber } from './moonshine.ts';
import type { SpeechReply, SpeechRequest, SpeechThreadOptions } from './speech-thread.ts';

export interface SpeechObservers {
  /** Times each transcription's round trip to the thread, its wait there included. */
  timer?: InferenceTimer;
  /** Told the model and the thread's CPU seconds of each transcription. */
  spent?: (model: SpeechModel, cpuSeconds: number) => void;
}

export class ThreadedSpeechToText implements Transcriber {
  private asked = 0;

  private constructor(
    private readonly thread: StreamThread<SpeechRequest, SpeechReply>,
    private readonly observers: SpeechObservers,
  ) {}

  /** Starts the thread and waits until its model is loaded, so a broken model fails at start. */
  static async start(options: SpeechThreadOptions, observers: SpeechObservers = {}): Promise<ThreadedSpeechToText> {
    const thread = new StreamThread<SpeechRequest, SpeechReply>('speech', new URL('./speech-thread.ts', import.meta.url), options);
    await thread.start();
    return new ThreadedSpeechToText(thread, observers);
  }

  /** Transcriptions asked of this thread and not yet answered, counted from the moment of asking. */
  get inFlight(): number {
    return this.asked;
  }

  async transcribe(samples: Float32Array, spent?: (cpuSeconds: number) => void): Promise<string> {
    this.asked++;
    const done = this.observers.timer?.('speech');
    try {
      const { text, model, cpuSeconds } = await this.thread.call((stream) => ({ type: 'transcribe', stream, samples }));
      done?.();
      if (Number.isFinite(cpuSeconds)) {
        this.observers.spent?.(model, cpuSeconds);
        spent?.(cpuSeconds);
      }
      return text;
    } finally {
      this.asked--;
    }
  }

  close(): Promise<void> {
    return this.thread.close();
  }
}

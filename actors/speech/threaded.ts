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
  private readonly thread: StreamThread<SpeechRequest, SpeechReply>;

  /**
   * The thread starts with the first transcription, which loads its model anyway (speech-thread.ts):
   * a host with no speech yet spends nothing on it (a thread's start is about 0.3 s of CPU).
   */
  constructor(options: SpeechThreadOptions, private readonly observers: SpeechObservers = {}) {
    this.thread = new StreamThread<SpeechRequest, SpeechReply>('speech', new URL('./speech-thread.ts', import.meta.url), options);
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

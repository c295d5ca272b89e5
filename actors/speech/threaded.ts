// Speech-to-text on one model thread (StreamThread), one segment per call. If the thread dies,
// the calls in flight fail and the next call starts a fresh thread.
import type { InferenceTimer } from '../models/inference-timer.ts';
import { StreamThread } from '../models/stream-thread.ts';
import type { Transcriber } from './moonshine.ts';
import type { SpeechReply, SpeechRequest, SpeechThreadOptions } from './speech-thread.ts';

export class ThreadedSpeechToText implements Transcriber {
  private asked = 0;

  private constructor(
    private readonly thread: StreamThread<SpeechRequest, SpeechReply>,
    private readonly timer?: InferenceTimer,
  ) {}

  /**
   * Starts the thread and waits until its model is loaded, so a broken model fails at start.
   * `timer` times each transcription's round trip to the thread, its wait there included.
   */
  static async start(options: SpeechThreadOptions, timer?: InferenceTimer): Promise<ThreadedSpeechToText> {
    const thread = new StreamThread<SpeechRequest, SpeechReply>('speech', new URL('./speech-thread.ts', import.meta.url), options);
    await thread.start();
    return new ThreadedSpeechToText(thread, timer);
  }

  /** Transcriptions asked of this thread and not yet answered, counted from the moment of asking. */
  get inFlight(): number {
    return this.asked;
  }

  async transcribe(samples: Float32Array): Promise<string> {
    this.asked++;
    const done = this.timer?.('speech');
    try {
      const { text } = await this.thread.call((stream) => ({ type: 'transcribe', stream, samples }));
      done?.();
      return text;
    } finally {
      this.asked--;
    }
  }

  close(): Promise<void> {
    return this.thread.close();
  }
}

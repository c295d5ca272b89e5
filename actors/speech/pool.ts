// Speech-to-text over several transcription threads, shared by every session of the host. One
// thread transcribes one segment at a time, so with a single thread sessions that speak at once
// wait for each other however many cores are free; each segment goes to the thread with the
// fewest segments in hand.
import type { Transcriber } from './moonshine.ts';
import type { SpeechThreadOptions } from './speech-thread.ts';
import { ThreadedSpeechToText, type SpeechObservers } from './threaded.ts';

export class SpeechToTextPool implements Transcriber {
  constructor(private readonly threads: readonly ThreadedSpeechToText[]) {
    if (threads.length === 0) throw new Error('a transcription pool needs at least one thread');
  }

  /** `threads` threads, each started when a segment first goes to it. */
  static of(thread: SpeechThreadOptions, options: { threads: number } & SpeechObservers): SpeechToTextPool {
    return new SpeechToTextPool(Array.from({ length: options.threads }, () => new ThreadedSpeechToText(thread, options)));
  }

  transcribe(samples: Float32Array, spent?: (cpuSeconds: number) => void): Promise<string> {
    const idlest = this.threads.reduce((best, thread) => (thread.inFlight < best.inFlight ? thread : best));
    return idlest.transcribe(samples, spent);
  }

  async close(): Promise<void> {
    await Promise.all(this.threads.map((thread) => thread.close()));
  }
}

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

  /** Starts `threads` threads and waits until each is up; each loads a model when a segment first needs it. */
  static async start(thread: SpeechThreadOptions, options: { threads: number } & SpeechObservers): Promise<SpeechToTextPool> {
    const started = await Promise.allSettled(
      Array.from({ length: options.threads }, () => ThreadedSpeechToText.start(thread, options)),
    );
    const threads = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
    const failed = started.find((result) => result.status === 'rejected');
    if (failed) {
      await Promise.all(threads.map((thread) => thread.close()));
      throw failed.reason;
    }
    return new SpeechToTextPool(threads);
  }

  transcribe(samples: Float32Array, spent?: (cpuSeconds: number) => void): Promise<string> {
    const idlest = this.threads.reduce((best, thread) => (thread.inFlight < best.inFlight ? thread : best));
    return idlest.transcribe(samples, spent);
  }

  async close(): Promise<void> {
    await Promise.all(this.threads.map((thread) => thread.close()));
  }
}

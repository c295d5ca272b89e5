// Speech-to-text on one worker thread, one segment at a time. If the thread dies, the calls in
// flight fail and the next call starts a fresh thread.
import type { Worker } from 'node:worker_threads';
import { startTsWorker } from '../models/ts-worker.ts';
import type { InferenceTimer } from '../models/inference-timer.ts';
import type { Transcriber } from './moonshine.ts';
import type { SpeechReply } from './speech-thread.ts';

interface Pending {
  resolve(text: string): void;
  reject(error: Error): void;
}

export class ThreadedSpeechToText implements Transcriber {
  private worker?: Promise<Worker>;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private asked = 0;

  private constructor(
    private readonly modelsDir: string,
    private readonly timer?: InferenceTimer,
  ) {}

  /**
   * Starts the thread and waits until its model is loaded, so a broken model fails at start.
   * `timer` times each transcription's round trip to the thread, its wait there included.
   */
  static async start(modelsDir: string, timer?: InferenceTimer): Promise<ThreadedSpeechToText> {
    const stt = new ThreadedSpeechToText(modelsDir, timer);
    await stt.thread();
    return stt;
  }

  /** Transcriptions asked of this thread and not yet answered, counted from the moment of asking. */
  get inFlight(): number {
    return this.asked;
  }

  async transcribe(samples: Float32Array): Promise<string> {
    this.asked++;
    try {
      return await this.ask(samples);
    } finally {
      this.asked--;
    }
  }

  async close(): Promise<void> {
    const worker = await this.worker?.catch(() => undefined);
    this.worker = undefined;
    await worker?.terminate();
  }

  private async ask(samples: Float32Array): Promise<string> {
    const worker = await this.thread();
    const id = this.nextId++;
    const done = this.timer?.('speech');
    return new Promise((resolve, reject) => {
      const transcribed = (text: string) => {
        done?.();
        resolve(text);
      };
      this.pending.set(id, { resolve: transcribed, reject });
      worker.postMessage({ id, samples });
    });
  }

  private thread(): Promise<Worker> {
    this.worker ??= new Promise((resolve, reject) => {
      const worker = startTsWorker(new URL('./speech-thread.ts', import.meta.url), { modelsDir: this.modelsDir });
      worker.on('message', (message: SpeechReply | { ready: true }) => {
        if ('ready' in message) return resolve(worker);
        const call = this.pending.get(message.id);
        this.pending.delete(message.id);
        if ('error' in message) call?.reject(new Error(message.error));
        else call?.resolve(message.text);
      });
      const fail = (error: Error) => {
        this.worker = undefined;
        reject(error);
        for (const call of this.pending.values()) call.reject(error);
        this.pending.clear();
      };
      worker.on('error', fail);
      worker.on('exit', (code) => fail(new Error(`the speech thread exited with code ${code}`)));
    });
    return this.worker;
  }
}

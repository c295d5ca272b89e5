// Voice analysis on a thread of its own, shared by every session of the host (voice-thread.ts).
// If the thread dies, its streams fail (their workers restart them) and the next stream opened
// starts a fresh thread.
import { Worker } from 'node:worker_threads';
import type { AudioSecond } from '../../bus/contracts/rows.ts';
import type { SpeechAudio } from './analyzer.ts';
import type { VoiceReply, VoiceRequest, VoiceThreadData } from './voice-thread.ts';

// A worker thread does not inherit the process's TypeScript loader: it registers it, then
// loads its body.
const BOOTSTRAP = `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))})
  .then(({ register }) => { register(); return import(${JSON.stringify(new URL('./voice-thread.ts', import.meta.url).href)}); })`;

export interface VoiceStreamHandlers {
  onSecond(row: AudioSecond): void;
  onSegment(segment: SpeechAudio): void;
  /** Analysis fell behind and `seconds` of the oldest audio were skipped. */
  onShed(seconds: number): void;
  /** The stream's analysis failed; it takes no more audio. */
  onFailed(error: Error): void;
}

/** One stream's voice analysis, in the thread. */
export interface VoiceStream {
  /** Raw 16 kHz mono s16le PCM. */
  write(chunk: Buffer): void;
  /** Resolves once everything written is analysed and the last second and segment delivered. */
  close(): Promise<void>;
}

interface OpenStream {
  handlers: VoiceStreamHandlers;
  closed?: { resolve(): void; reject(error: Error): void };
}

export interface VoiceThreadOptions extends VoiceThreadData {
  /** Durations of the thread's VAD calls, in seconds, for the host's metrics. */
  observeInference?(seconds: number[]): void;
}

export class VoiceThread {
  private worker?: Promise<Worker>;
  private readonly streams = new Map<number, OpenStream>();
  private nextId = 0;

  private constructor(private readonly options: VoiceThreadOptions) {}

  /** Starts the thread and waits until its model is loaded, so a broken model fails at start. */
  static async start(options: VoiceThreadOptions): Promise<VoiceThread> {
    const thread = new VoiceThread(options);
    await thread.thread();
    return thread;
  }

  /** `startOffset`: seconds since the session's start of the stream's first sample. */
  open(session: string, startOffset: number, handlers: VoiceStreamHandlers): VoiceStream {
    const id = this.nextId++;
    const stream: OpenStream = { handlers };
    this.streams.set(id, stream);
    const worker = this.thread();
    const send = (request: VoiceRequest, transfer: ArrayBuffer[] = []) =>
      void worker.then((w) => w.postMessage(request, transfer), () => {});
    send({ type: 'open', stream: id, session, startOffset });
    return {
      write: (chunk) => {
        const copy = new Uint8Array(chunk); // the pipe's buffer is not ours to hand over
        send({ type: 'audio', stream: id, chunk: copy }, [copy.buffer]);
      },
      close: () =>
        new Promise<void>((resolve, reject) => {
          if (!this.streams.has(id)) return resolve();
          stream.closed = { resolve, reject };
          send({ type: 'close', stream: id });
        }),
    };
  }

  async close(): Promise<void> {
    const worker = await this.worker?.catch(() => undefined);
    this.worker = undefined;
    await worker?.terminate();
  }

  private receive(reply: VoiceReply): void {
    if (reply.type === 'inference') return this.options.observeInference?.(reply.seconds);
    if (reply.type === 'ready') return;
    const stream = this.streams.get(reply.stream);
    if (!stream) return;
    const { handlers } = stream;
    if (reply.type === 'second') handlers.onSecond(reply.row);
    else if (reply.type === 'segment') handlers.onSegment(reply.segment);
    else if (reply.type === 'shed') handlers.onShed(reply.seconds);
    else if (reply.type === 'failed') handlers.onFailed(new Error(reply.error));
    else {
      this.streams.delete(reply.stream);
      if (reply.error === undefined) stream.closed?.resolve();
      else stream.closed?.reject(new Error(reply.error));
    }
  }

  private thread(): Promise<Worker> {
    this.worker ??= new Promise((resolve, reject) => {
      const { modelsDir, maxBacklogSeconds } = this.options;
      const worker = new Worker(BOOTSTRAP, { eval: true, workerData: { modelsDir, maxBacklogSeconds } satisfies VoiceThreadData });
      worker.on('message', (reply: VoiceReply) => {
        if (reply.type === 'ready') resolve(worker);
        this.receive(reply);
      });
      const fail = (error: Error) => {
        this.worker = undefined;
        reject(error);
        for (const stream of this.streams.values()) {
          stream.handlers.onFailed(error);
          stream.closed?.reject(error);
        }
        this.streams.clear();
      };
      worker.on('error', fail);
      worker.on('exit', (code) => fail(new Error(`the voice thread exited with code ${code}`)));
    });
    return this.worker;
  }
}

// The one model thread of the host (face, voice and transcription), seen from the main thread:
// start it (it resolves once the body has loaded its models), open a stream, send it requests,
// close it (resolves once the body has delivered the stream's last results); or make a call,
// one request on a stream of its own and its one reply. If the thread dies, its streams and
// calls fail (session workers restart theirs) and the next stream or call starts a fresh
// thread. The body's side is stream-thread-body.ts.
import type { Worker } from 'node:worker_threads';
import type { ModelName } from './inference-timer.ts';
import { startTsWorker } from './ts-worker.ts';

/** What every body says besides the replies of its own streams. */
export type ControlReply =
  | { type: 'ready' }
  /** Durations of model calls since the last report, in seconds. */
  | { type: 'inference'; model: ModelName; seconds: number[] }
  /**
   * The body can do no less per request and still falls behind (the face thread: FaceEffort,
   * every stream at its floor), or no longer; `detail` says why, for the log.
   */
  | { type: 'saturated'; saturated: boolean; detail?: string }
  | { type: 'closed'; stream: number; error?: string }
  /** The stream's analysis failed; it takes no more requests. */
  | { type: 'failed'; stream: number; error: string };

export type CloseRequest = { type: 'close'; stream: number };

export interface ThreadStream<Request> {
  /** The id the body knows the stream by: every request carries it. */
  id: number;
  send(request: Request, transfer?: ArrayBuffer[]): void;
  /** Resolves once the body has finished the stream; rejects if its analysis failed. */
  close(): Promise<void>;
}

/** What the main thread hears of the body as a whole. */
export interface ThreadObservers {
  /** Durations of the body's model calls, in seconds. */
  inference?(model: ModelName, seconds: number[]): void;
  /**
   * The body is saturated, or no longer (ControlReply); a body (re)started says false once
   * ready, as it starts with no stream behind.
   */
  saturated?(saturated: boolean, detail?: string): void;
}

interface OpenStream<Reply> {
  deliver(reply: Reply): void;
  onFailed(error: Error): void;
  closed?: { resolve(): void; reject(error: Error): void };
}

export class StreamThread<Request extends { stream: number }, Reply extends { type: string; stream: number }> {
  private worker?: Promise<Worker>;
  private readonly streams = new Map<number, OpenStream<Reply>>();
  private nextId = 0;

  constructor(
    private readonly name: string,
    private readonly body: URL,
    private readonly workerData: unknown,
    private readonly observers: ThreadObservers = {},
  ) {}

  /** Starts the thread and waits until its models are loaded, so a broken model fails at start. */
  async start(): Promise<void> {
    await this.thread();
  }

  /** `deliver` gets the stream's own replies; `onFailed` hears if its analysis fails. */
  open(deliver: (reply: Reply) => void, onFailed: (error: Error) => void): ThreadStream<Request> {
    const id = this.nextId++;
    const stream: OpenStream<Reply> = { deliver, onFailed };
    this.streams.set(id, stream);
    const worker = this.thread();
    const send = (request: Request | CloseRequest, transfer: ArrayBuffer[] = []) =>
      void worker.then((w) => w.postMessage(request, transfer), () => {});
    return {
      id,
      send,
      close: () =>
        new Promise<void>((resolve, reject) => {
          if (!this.streams.has(id)) return resolve();
          stream.closed = { resolve, reject };
          send({ type: 'close', stream: id });
        }),
    };
  }

  /** Request/reply: `request` is sent on a stream of its own, which the body answers once and then closes. */
  async call(request: (stream: number) => Request, transfer?: ArrayBuffer[]): Promise<Reply> {
    let reply: Reply | undefined;
    let failure: Error | undefined;
    const stream = this.open((answer) => (reply = answer), (error) => (failure = error));
    stream.send(request(stream.id), transfer);
    await stream.close();
    if (failure) throw failure;
    if (!reply) throw new Error(`the ${this.name} thread closed a call without answering it`);
    return reply;
  }

  async close(): Promise<void> {
    const worker = await this.worker?.catch(() => undefined);
    this.worker = undefined;
    await worker?.terminate();
  }

  private receive(reply: Reply | ControlReply): void {
    if (reply.type === 'ready') return;
    if (reply.type === 'inference') {
      const { model, seconds } = reply as Extract<ControlReply, { type: 'inference' }>;
      return this.observers.inference?.(model, seconds);
    }
    if (reply.type === 'saturated') {
      const { saturated, detail } = reply as Extract<ControlReply, { type: 'saturated' }>;
      return this.observers.saturated?.(saturated, detail);
    }
    const stream = this.streams.get((reply as Reply).stream);
    if (!stream) return;
    if (reply.type === 'failed') return stream.onFailed(new Error((reply as Extract<ControlReply, { type: 'failed' }>).error));
    if (reply.type === 'closed') {
      const { stream: id, error } = reply as Extract<ControlReply, { type: 'closed' }>;
      this.streams.delete(id);
      if (error === undefined) stream.closed?.resolve();
      else stream.closed?.reject(new Error(error));
      return;
    }
    stream.deliver(reply as Reply);
  }

  private thread(): Promise<Worker> {
    this.worker ??= startTsWorker(this.body, this.workerData).then(
      (worker) => this.started(worker),
      (error) => {
        // A thread started by its first stream (a lazy one) fails that stream here, or it waits forever.
        this.failAll(error);
        throw error;
      },
    );
    return this.worker;
  }

  private started(worker: Worker): Promise<Worker> {
    return new Promise((resolve, reject) => {
      worker.on('message', (reply: Reply | ControlReply) => {
        if (reply.type === 'ready') {
          resolve(worker);
          this.observers.saturated?.(false);
        }
        this.receive(reply);
      });
      const fail = (error: Error) => {
        reject(error);
        this.failAll(error);
      };
      worker.on('error', fail);
      worker.on('exit', (code) => fail(new Error(`the ${this.name} thread exited with code ${code}`)));
    });
  }

  /** The thread is gone or never came: every open stream fails, and the next one starts a fresh thread. */
  private failAll(error: Error): void {
    this.worker = undefined;
    for (const stream of this.streams.values()) {
      stream.onFailed(error);
      stream.closed?.reject(error);
    }
    this.streams.clear();
  }
}

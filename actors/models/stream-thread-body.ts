// The body's side of a StreamThread (stream-thread.ts): replies to the main thread, the timing
// of its model calls (reported once a second, for the host's metrics), and its requests.
import { parentPort } from 'node:worker_threads';
import type { InferenceTimer, ModelName } from './inference-timer.ts';
import type { CloseRequest, ControlReply } from './stream-thread.ts';

const REPORT_INTERVAL_MS = 1000;

export interface ThreadPort<Request, Reply> {
  post(reply: Reply | ControlReply, transfer?: ArrayBuffer[]): void;
  /** Times the body's model calls; the host's metrics get them. */
  timer: InferenceTimer;
  /** Handles the main thread's requests; call once the models are loaded: it says ready. */
  serve(handle: (request: Request | CloseRequest) => void): void;
}

export function threadPort<Request, Reply>(): ThreadPort<Request, Reply> {
  const port = parentPort;
  if (!port) throw new Error('a stream thread body runs as a worker thread');
  const post = (reply: Reply | ControlReply, transfer: ArrayBuffer[] = []) => port.postMessage(reply, transfer);
  const timings = new Map<ModelName, number[]>();
  setInterval(() => {
    for (const [model, seconds] of timings) post({ type: 'inference', model, seconds });
    timings.clear();
  }, REPORT_INTERVAL_MS).unref();
  return {
    post,
    timer: (model) => {
      const start = performance.now();
      return () => {
        const list = timings.get(model) ?? [];
        list.push((performance.now() - start) / 1000);
        timings.set(model, list);
      };
    },
    serve: (handle) => {
      port.on('message', handle);
      post({ type: 'ready' });
    },
  };
}

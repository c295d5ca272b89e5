// The body of the transcription thread: one Moonshine instance, one segment at a time.
// onnxruntime-node runs inference on the calling thread, so transcription lives here, away
// from the event loop that carries heartbeats, ingest and every other session.
import { parentPort, workerData } from 'node:worker_threads';
import { SpeechToText } from './moonshine.ts';

export interface SpeechRequest {
  id: number;
  samples: Float32Array;
}
export type SpeechReply = { id: number; text: string } | { id: number; error: string };

const port = parentPort;
if (!port) throw new Error('speech-thread.ts runs as a worker thread');
const stt = await SpeechToText.load((workerData as { modelsDir: string }).modelsDir);
let queue: Promise<void> = Promise.resolve();

port.on('message', (request: SpeechRequest) => {
  queue = queue.then(async () => {
    try {
      port.postMessage({ id: request.id, text: await stt.transcribe(request.samples) } satisfies SpeechReply);
    } catch (error) {
      port.postMessage({ id: request.id, error: (error as Error).message } satisfies SpeechReply);
    }
  });
});
port.postMessage({ ready: true });

// The body of the transcription thread: Moonshine tiny and base, one segment at a time, each a
// call (StreamThread.call): its text, or why it failed, then the end of its stream.
// onnxruntime-node runs inference on the calling thread, so transcription lives here, away
// from the event loop that carries heartbeats, ingest and every other session. Each segment
// goes to tiny or, when noisy, to base (noise-routed-transcriber.ts).
import { workerData } from 'node:worker_threads';
import { threadPort } from '../models/stream-thread-body.ts';
import { SpeechToText } from './moonshine.ts';
import { NoiseRoutedTranscriber } from './noise-routed-transcriber.ts';

export type SpeechRequest = { type: 'transcribe'; stream: number; samples: Float32Array };
export type SpeechReply = { type: 'text'; stream: number; text: string };

const port = threadPort<SpeechRequest, SpeechReply>();
export interface SpeechThreadOptions {
  modelsDir: string;
  noisyBelowSnrDb: number;
}

const { modelsDir, noisyBelowSnrDb } = workerData as SpeechThreadOptions;
const tiny = await SpeechToText.load(modelsDir, 'tiny');
// With no segment to route to base, base is not loaded: about 245 MB less per thread.
const stt = noisyBelowSnrDb > 0 ? new NoiseRoutedTranscriber(tiny, await SpeechToText.load(modelsDir, 'base'), noisyBelowSnrDb) : tiny;
let queue: Promise<void> = Promise.resolve();

port.serve((request) => {
  queue = queue.then(async () => {
    if (request.type === 'close') return port.post({ type: 'closed', stream: request.stream });
    try {
      port.post({ type: 'text', stream: request.stream, text: await stt.transcribe(request.samples) });
    } catch (error) {
      port.post({ type: 'failed', stream: request.stream, error: (error as Error).message });
    }
  });
});

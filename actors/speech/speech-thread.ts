// The body of the transcription thread: Moonshine tiny and base, one segment at a time, each a
// call (StreamThread.call): its text, the model that wrote it and the CPU time that took, or
// why it failed, then the end of its stream. onnxruntime-node runs inference on the calling
// thread, so transcription lives here, away from the event loop that carries heartbeats,
// ingest and every other session, and this thread's CPU time is the transcription's. Each
// segment goes to tiny or, when noisy, to base (noise-routed-transcriber.ts).
import { workerData } from 'node:worker_threads';
import type { SpeechModel } from '../models/files.ts';
import { thisProcessorMultipliesSignedBytesExactly } from '../models/signed-byte-products.ts';
import { threadPort } from '../models/stream-thread-body.ts';
import { threadCpuSeconds } from '../models/thread-cpu.ts';
import { SpeechToText } from './moonshine.ts';
import { NoiseRoutedTranscriber } from './noise-routed-transcriber.ts';

export type SpeechRequest = { type: 'transcribe'; stream: number; samples: Float32Array };
export type SpeechReply = { type: 'text'; stream: number; text: string; model: SpeechModel; cpuSeconds: number };

const port = threadPort<SpeechRequest, SpeechReply>();
export interface SpeechThreadOptions {
  modelsDir: string;
  noisyBelowSnrDb: number;
}

const { modelsDir, noisyBelowSnrDb } = workerData as SpeechThreadOptions;
const signedWeights = thisProcessorMultipliesSignedBytesExactly();
const tiny = await SpeechToText.load(modelsDir, 'tiny', signedWeights);
// With no segment to route to base, base is not loaded: about 245 MB less per thread.
const base = noisyBelowSnrDb > 0 ? await SpeechToText.load(modelsDir, 'base', signedWeights) : undefined;
const routed = base && new NoiseRoutedTranscriber(tiny, base, noisyBelowSnrDb);
let queue: Promise<void> = Promise.resolve();

port.serve((request) => {
  queue = queue.then(async () => {
    if (request.type === 'close') return port.post({ type: 'closed', stream: request.stream });
    try {
      const stt = routed?.choose(request.samples) ?? tiny;
      const before = threadCpuSeconds();
      const text = await stt.transcribe(request.samples);
      port.post({ type: 'text', stream: request.stream, text, model: stt.name, cpuSeconds: threadCpuSeconds() - before });
    } catch (error) {
      port.post({ type: 'failed', stream: request.stream, error: (error as Error).message });
    }
  });
});

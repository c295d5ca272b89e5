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
import { SpeechToText, type Transcriber } from './moonshine.ts';
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

/**
 * A model loaded when a segment first needs it, not when the thread starts: a host is ready, and
 * takes sessions over, some 4 s of CPU sooner, and one that never hears noisy speech never holds
 * base (about 245 MB per thread). The first segment for each model waits for its load, 1-2 s.
 * The model files were checked when the host started (models/required.ts).
 */
class LoadedOnFirstUse implements Transcriber {
  private loading?: Promise<SpeechToText>;

  constructor(readonly name: SpeechModel) {}

  loaded(): Promise<SpeechToText> {
    this.loading ??= SpeechToText.load(modelsDir, this.name, signedWeights);
    return this.loading;
  }

  async transcribe(samples: Float32Array): Promise<string> {
    return (await this.loaded()).transcribe(samples);
  }
}

const tiny = new LoadedOnFirstUse('tiny');
// With no segment to route to base, base is never loaded.
const routed = noisyBelowSnrDb > 0 ? new NoiseRoutedTranscriber(tiny, new LoadedOnFirstUse('base'), noisyBelowSnrDb) : undefined;
let queue: Promise<void> = Promise.resolve();

port.serve((request) => {
  queue = queue.then(async () => {
    if (request.type === 'close') return port.post({ type: 'closed', stream: request.stream });
    try {
      const stt = await (routed?.choose(request.samples) ?? tiny).loaded();
      // After the load: a segment's CPU is its own, not the model's one-off load.
      const before = threadCpuSeconds();
      const text = await stt.transcribe(request.samples);
      port.post({ type: 'text', stream: request.stream, text, model: stt.name, cpuSeconds: threadCpuSeconds() - before });
    } catch (error) {
      port.post({ type: 'failed', stream: request.stream, error: (error as Error).message });
    }
  });
});

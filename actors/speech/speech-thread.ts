// The body of the transcription thread: one Moonshine instance, one segment at a time, each a
// call (StreamThread.call): its text, or why it failed, then the end of its stream.
// onnxruntime-node runs inference on the calling thread, so transcription lives here, away
// from the event loop that carries heartbeats, ingest and every other session. Noisy segments
// are denoised here too (denoised-transcriber.ts), on this thread's CPU.
import { workerData } from 'node:worker_threads';
import { threadPort } from '../models/stream-thread-body.ts';
import { DenoisedTranscriber } from './denoised-transcriber.ts';
import { SpeechDenoiser } from './denoiser.ts';
import { SpeechToText } from './moonshine.ts';

export type SpeechRequest = { type: 'transcribe'; stream: number; samples: Float32Array };
export type SpeechReply = { type: 'text'; stream: number; text: string };

const port = threadPort<SpeechRequest, SpeechReply>();
const { modelsDir } = workerData as { modelsDir: string };
const stt = new DenoisedTranscriber(await SpeechToText.load(modelsDir), await SpeechDenoiser.load());
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

// One transcribing host process of the transcription benchmark: its own Moonshine sessions
// (onnxruntime-node runs inference on the calling JavaScript thread, so one process uses one
// core), running its share of the sessions on a schedule common to every host process.
// Driven over IPC by ops/bench/transcription.ts.
import { setTimeout as sleep } from 'node:timers/promises';
import { readConfig } from '../../../bus/index.ts';
import { thisProcessorMultipliesSignedBytesExactly } from '../../../actors/models/index.ts';
import { SpeechToText, type Transcriber, TranscriptionQueue } from '../../../actors/speech/index.ts';
import { SAMPLE_RATE } from './speech.ts';

const config = readConfig();
const signedWeights = thisProcessorMultipliesSignedBytesExactly();

export interface LevelRequest {
  clips: Float32Array[];
  /** Indices of the sessions this process runs, out of `sessions`. */
  first: number;
  count: number;
  sessions: number;
  /** Seconds between a session's start and the next one's, over all processes. */
  staggerSeconds: number;
  feedSeconds: number;
  /** Date.now() at which every process starts feeding. */
  startAt: number;
}

export interface LevelReport {
  pushed: number;
  dropped: number;
  /** Seconds from a segment's push to its transcript. */
  latencies: number[];
  cpuSeconds: number;
  wallSeconds: number;
}

const SESSION = '65f0c0ffee0123456789abcd';

async function runLevel(stt: SpeechToText, request: LevelRequest): Promise<LevelReport> {
  const pushedAt = new Map<Float32Array, number>();
  const latencies: number[] = [];
  let dropped = 0;
  const timed: Transcriber = {
    async transcribe(samples) {
      const text = await stt.transcribe(samples);
      latencies.push((performance.now() - pushedAt.get(samples)!) / 1000);
      return text;
    },
  };
  const startedAt = performance.now() + (request.startAt - Date.now());
  const feedEnds = startedAt + request.feedSeconds * 1000;
  const feed = async (index: number) => {
    const queue = new TranscriptionQueue({ session: SESSION, limit: config.transcriptionQueueLimit, stt: timed, onRow: () => {}, onDropped: () => dropped++ });
    // Continuous speech: a segment reaches the queue when its last word has been spoken.
    let clock = startedAt + index * request.staggerSeconds * 1000;
    for (let n = index; ; n++) {
      const clip = request.clips[n % request.clips.length]!;
      clock += (clip.length / SAMPLE_RATE) * 1000;
      if (clock > feedEnds) break;
      await sleep(Math.max(0, clock - performance.now()));
      const samples = clip.subarray(0); // a view of its own, to tell the segments apart
      pushedAt.set(samples, performance.now());
      queue.push({ start: 0, end: samples.length / SAMPLE_RATE, speech: samples.length / SAMPLE_RATE, samples });
    }
    await queue.close();
  };
  await sleep(Math.max(0, startedAt - performance.now()));
  const cpu = process.cpuUsage();
  const indices = Array.from({ length: request.count }, (_, i) => request.first + i);
  await Promise.all(indices.map(feed));
  const used = process.cpuUsage(cpu);
  return {
    pushed: pushedAt.size,
    dropped,
    latencies,
    cpuSeconds: (used.user + used.system) / 1e6,
    wallSeconds: (performance.now() - startedAt) / 1000,
  };
}

// The model the benchmark was asked for, 'tiny' or 'base', as this process's first argument.
const stt = await SpeechToText.load(config.modelsDir, process.argv[2] === 'base' ? 'base' : 'tiny', signedWeights);
process.on('message', (request: LevelRequest | 'exit') => {
  if (request === 'exit') process.exit(0);
  runLevel(stt, request).then(
    (report) => process.send!(report),
    (error: Error) => {
      console.error(error);
      process.exit(1);
    },
  );
});
process.send!('ready');

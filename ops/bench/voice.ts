// CPU cost of the voice analyser (level, pitch, Silero VAD, segmentation) per second of audio,
// as a fraction of one core. Feeds 120 s of JFK speech, quiet room noise, voice-like glides and
// louder noise, in the 4 KiB chunks ffmpeg's pipe delivers, as fast as the analyser takes them:
// one stream alone, then 16 streams analysed together as a host's voice thread does (one VAD
// call per round for every stream).
import { type AudioSecond, readConfig } from '../../bus/index.ts';
import { PitchTracker, VAD_STEP, VadStream, VoiceActivityModel, VoiceStreams } from '../../actors/voice/index.ts';
import { seededRandom } from '../support/seeded-random.ts';
import { concat, glide, noise } from './lib/signals.ts';
import { SAMPLE_RATE, jfkSamples, toPcm } from './lib/speech.ts';
import { cpuSecondsOf, fixed, printTable } from './lib/stats.ts';

const model = await VoiceActivityModel.load(readConfig().modelsDir);

const SECONDS = 120;
const CHUNK_BYTES = 4096;
const TARGET_CORE_FRACTION = 0.02;
const SESSION = '65f0c0ffee0123456789abcd';
const BATCHED_STREAMS = 16;

async function benchAudio(): Promise<Float32Array> {
  const random = seededRandom(7);
  const jfk = await jfkSamples();
  const cycle = () => [jfk, noise(3, -65, random), glide(4, 110, 240, -18), noise(2, -30, random), glide(3, 220, 180, -24)];
  const parts: Float32Array[] = [];
  let length = 0;
  while (length < SECONDS * SAMPLE_RATE) {
    for (const part of cycle()) {
      parts.push(part);
      length += part.length;
    }
  }
  return concat(parts).subarray(0, SECONDS * SAMPLE_RATE);
}

/** `count` streams of the same audio, written chunk by chunk in turn, analysed together. */
async function runAnalyzers(pcm: Buffer, count: number): Promise<{ rows: AudioSecond[]; segments: number }> {
  const rows: AudioSecond[] = [];
  let segments = 0;
  const streams = new VoiceStreams({ model, maxBacklogSamples: Infinity, onShed: () => {}, onFailed: () => {} });
  const opened = Array.from({ length: count }, () =>
    streams.open({ session: SESSION, startOffset: 0, onSecond: (row) => rows.push(row), onSegment: () => segments++ }),
  );
  for (let at = 0; at < pcm.length; at += CHUNK_BYTES) {
    for (const stream of opened) streams.write(stream, pcm.subarray(at, at + CHUNK_BYTES));
  }
  for (const stream of opened) await streams.close(stream);
  return { rows, segments };
}

async function runVadOnly(samples: Float32Array): Promise<void> {
  const vad = new VadStream();
  for (let at = 0; at + VAD_STEP <= samples.length; at += VAD_STEP) {
    vad.load(samples.subarray(at, at + VAD_STEP));
    await model.probabilities([vad]);
  }
}

function runPitchOnly(samples: Float32Array): void {
  const frame = 2 * VAD_STEP;
  const pitch = new PitchTracker(frame);
  for (let at = 0; at + frame <= samples.length; at += VAD_STEP) {
    const window = samples.subarray(at, at + frame);
    let squares = 0;
    for (let i = 0; i < window.length; i++) squares += window[i]! * window[i]!;
    pitch.frequency(window, squares / frame);
  }
}

const samples = await benchAudio();
const pcm = toPcm(samples);
// Warm-up: model load, graph optimisation and JIT are not per-second costs.
await runAnalyzers(pcm.subarray(0, 10 * SAMPLE_RATE * 2), 1);

const full = await cpuSecondsOf(() => runAnalyzers(pcm, 1));
const batched = await cpuSecondsOf(() => runAnalyzers(pcm, BATCHED_STREAMS));
const perStream = { cpuSeconds: batched.cpuSeconds / BATCHED_STREAMS, wallSeconds: batched.wallSeconds / BATCHED_STREAMS };
const vad = await cpuSecondsOf(() => runVadOnly(samples));
const pitch = await cpuSecondsOf(async () => runPitchOnly(samples));

const row = (name: string, run: { cpuSeconds: number; wallSeconds: number }) => [
  name,
  fixed(run.cpuSeconds, 2),
  fixed(run.wallSeconds, 2),
  `${fixed((100 * run.cpuSeconds) / SECONDS, 2)} %`,
  fixed((1000 * run.cpuSeconds) / SECONDS, 2),
];
printTable(
  `Voice analysis over ${SECONDS} s of audio (JFK speech, room noise, glides, noise), ${CHUNK_BYTES}-byte chunks`,
  ['part', 'CPU s', 'wall s', 'one-core share', 'CPU ms per audio s'],
  [
    row('one stream (level + pitch + VAD + segments)', full),
    row('  of which Silero VAD alone', vad),
    row('  of which pitch alone', pitch),
    row(`per stream of ${BATCHED_STREAMS} analysed together`, perStream),
  ],
);
const share = perStream.cpuSeconds / SECONDS;
console.log(`rows: ${full.result.rows.length} audio seconds, ${full.result.segments} speech segments`);
console.log(
  `target: under ${100 * TARGET_CORE_FRACTION} % of one core per session (of ${BATCHED_STREAMS}) -> ${share < TARGET_CORE_FRACTION ? 'met' : `missed by ${fixed(100 * (share - TARGET_CORE_FRACTION), 2)} points`}`,
);

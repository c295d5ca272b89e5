// Speech under noise, on files: the word error rate of the transcribers on read speech (people
// recorded, and espeak-ng's voice), clean and with pink noise or music under it at 20, 10 and
// 5 dB SNR, each mix passed through every candidate treatment first, each sentence transcribed
// whole. Transcribers: Moonshine `tiny`, Moonshine `base`, and `service`, what the service runs
// (tiny, or base for segments less than NOISY_SPEECH_BELOW_SNR_DB above their noise floor). A
// treatment is an ffmpeg audio filter on the whole track (as ingest would run it on the speech
// branch), or RNNoise: `rnnoise` on each sentence as the transcription thread would hear it,
// `rnnoise-gated` the same on the noisy sentences only (by the same noise floor), `rnnoise-track`
// on the whole track. Fast, to choose what the live benchmark then runs (speech-noise-live.ts).
// See ops/bench/README-speech-noise.md.
import { execFile } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { readConfig } from '../../bus/index.ts';
import { readOpsConfig } from '../ops-config.ts';
import { thisProcessorMultipliesSignedBytesExactly } from '../../actors/models/index.ts';
import { NoiseRoutedTranscriber, segmentSnrDb, SpeechToText, type Transcriber } from '../../actors/speech/index.ts';
import { pcmToFloat } from '../support/voice-media.ts';
import { wordErrors, words } from '../support/word-error-rate.ts';
import { SpeechDenoiser } from './lib/rnnoise-denoiser.ts';
import { CONDITIONS, VOICES, conditionName, mixedTrack, readSpeech, type Corpus, type Voice } from './lib/speech-corpus.ts';
import { SAMPLE_RATE, toPcm } from './lib/speech.ts';
import { fixed, printTable } from './lib/stats.ts';

const config = readConfig();
const tooling = readOpsConfig();
const signedWeights = thisProcessorMultipliesSignedBytesExactly();

/** Treatments tried on the speech: ffmpeg audio filters, '' for ingest as it is, and the RNNoise ones. */
const TREATMENTS = process.env.SPEECH_NOISE_FILTERS?.split(';') ?? ['', 'highpass=f=200', 'afftdn=nf=-25:tn=1', 'rnnoise', 'rnnoise-gated'];
const TRANSCRIBERS = process.env.SPEECH_NOISE_TRANSCRIBERS?.split(';') ?? ['tiny', 'base', 'service'];

/** `samples` through ffmpeg's `filter` as s16le, the format ingest writes. */
function filtered(samples: Float32Array, filter: string): Promise<Float32Array> {
  if (!filter) return Promise.resolve(samples);
  return new Promise((resolve, reject) => {
    const child = execFile(
      'ffmpeg',
      ['-hide_banner', '-nostdin', '-loglevel', 'error', '-f', 's16le', '-ar', String(SAMPLE_RATE), '-ac', '1', '-i', 'pipe:0',
        '-af', filter, '-f', 's16le', 'pipe:1'],
      { encoding: 'buffer', maxBuffer: 1 << 30 },
      (error, stdout) => (error ? reject(error) : resolve(pcmToFloat(stdout))),
    );
    child.stdin!.end(toPcm(samples));
  });
}

/** CPU seconds spent in the in-process treatments (RNNoise) and in each transcriber, with the minutes of audio they heard. */
const cpuSpent = new Map<string, { seconds: number; minutes: number }>();

function account(name: string, cpu: NodeJS.CpuUsage, samples: number): void {
  const used = process.cpuUsage(cpu);
  const spent = cpuSpent.get(name) ?? { seconds: 0, minutes: 0 };
  cpuSpent.set(name, { seconds: spent.seconds + (used.user + used.system) / 1e6, minutes: spent.minutes + samples / SAMPLE_RATE / 60 });
}

function timed(treatment: string, samples: Float32Array, work: (samples: Float32Array) => Float32Array): Float32Array {
  const cpu = process.cpuUsage();
  const result = work(samples);
  account(treatment, cpu, samples.length);
  return result;
}

/** `stt` with the CPU of its calls counted under `name`. */
function counted(name: string, stt: Transcriber): Transcriber {
  return {
    async transcribe(samples) {
      const cpu = process.cpuUsage();
      const text = await stt.transcribe(samples);
      account(name, cpu, samples.length);
      return text;
    },
  };
}

const MARGIN = Math.round(0.2 * SAMPLE_RATE);

type SentenceTreatment = (sentence: Float32Array) => Float32Array;

interface Score {
  /** Word error rate per voice. */
  wer: Map<Voice, number>;
  worst: string;
}

async function errorRate(stt: Transcriber, corpus: Corpus, track: Float32Array, perSentence: SentenceTreatment): Promise<Score> {
  const counts = new Map<Voice, { errors: number; words: number }>();
  let worst = { errors: -1, text: '' };
  for (const sentence of corpus.sentences) {
    const from = Math.max(0, sentence.start - MARGIN);
    const text = await stt.transcribe(perSentence(track.subarray(from, sentence.start + sentence.length + MARGIN)));
    const counted = wordErrors(sentence.text, text);
    const voice = counts.get(sentence.voice) ?? { errors: 0, words: 0 };
    counts.set(sentence.voice, { errors: voice.errors + counted.errors, words: voice.words + counted.words });
    if (counted.errors > worst.errors) worst = { errors: counted.errors, text };
  }
  return { wer: new Map([...counts].map(([voice, { errors, words }]) => [voice, errors / words])), worst: worst.text };
}

const dir = join(config.varDir, 'bench', `speech-noise-${process.pid}`);
mkdirSync(dir, { recursive: true });
try {
  const corpus = await readSpeech(tooling.mediaDir, dir);
  const [tiny, base] = await Promise.all([SpeechToText.load(config.modelsDir, 'tiny', signedWeights), SpeechToText.load(config.modelsDir, 'base', signedWeights)]);
  const models = new Map<string, Transcriber>([
    ['tiny', tiny],
    ['base', base],
    ['service', new NoiseRoutedTranscriber(tiny, base, config.noisySpeechBelowSnrDb)],
  ]);
  const denoiser = await SpeechDenoiser.load();
  const noisy = (samples: Float32Array) => segmentSnrDb(samples) < config.noisySpeechBelowSnrDb;
  const asIs: SentenceTreatment = (sentence) => sentence;
  const treated = async (stt: Transcriber, track: Float32Array, treatment: string) => {
    const denoise = (samples: Float32Array) => timed(treatment, samples, (input) => denoiser.denoise(input));
    if (treatment === 'rnnoise') return errorRate(stt, corpus, track, denoise);
    if (treatment === 'rnnoise-gated') return errorRate(stt, corpus, track, (sentence) => (noisy(sentence) ? denoise(sentence) : sentence));
    const whole = treatment === 'rnnoise-track' ? denoise(track) : await filtered(track, treatment);
    return errorRate(stt, corpus, whole, asIs);
  };
  const wordsOf = (voice: Voice) => corpus.sentences.filter((s) => s.voice === voice).reduce((sum, s) => sum + words(s.text).length, 0);
  const columns = TRANSCRIBERS.flatMap((model) => TREATMENTS.map((treatment) => ({ model, treatment })));
  const rows = new Map<Voice, string[][]>(VOICES.map((voice) => [voice, []]));
  const worst: string[][] = [];
  for (const condition of CONDITIONS) {
    const track = mixedTrack(corpus, condition);
    const perVoice = new Map<Voice, string[]>(VOICES.map((voice) => [voice, [conditionName(condition)]]));
    for (const { model, treatment } of columns) {
      const stt = models.get(model);
      if (!stt) throw new Error(`unknown transcriber ${model}; known: ${[...models.keys()].join(', ')}`);
      const result = await treated(counted(model, stt), track, treatment);
      for (const voice of VOICES) perVoice.get(voice)!.push(fixed(result.wer.get(voice)!, 3));
      worst.push([conditionName(condition), model, treatment || 'none', result.worst]);
    }
    for (const voice of VOICES) {
      rows.get(voice)!.push(perVoice.get(voice)!);
      console.log(voice, perVoice.get(voice)!.join('  '));
    }
  }
  for (const voice of VOICES) {
    printTable(
      `Word error rate on files, ${voice} voice (${corpus.sentences.filter((s) => s.voice === voice).length} sentences, ${wordsOf(voice)} words), per transcriber and treatment`,
      ['condition', ...columns.map(({ model, treatment }) => `${model}, ${treatment || 'none'}`)],
      rows.get(voice)!,
    );
  }
  printTable(
    'CPU per minute of audio heard, of each transcriber and in-process treatment (RNNoise) over every run (ffmpeg filters: ffmpeg -benchmark)',
    ['transcriber or treatment', 'ms per minute'],
    [...cpuSpent].map(([name, { seconds, minutes }]) => [name, fixed((1000 * seconds) / minutes, 0)]),
  );
  printTable('The worst-transcribed sentence of each run', ['condition', 'transcriber', 'filter', 'transcript'], worst);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

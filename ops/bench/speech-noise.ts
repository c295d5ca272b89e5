// Speech under noise, on files: the word error rate of Moonshine tiny on read speech, clean and
// with pink noise or music under it at 20, 10 and 5 dB SNR, each mix passed through every
// candidate treatment first, each sentence transcribed whole. A treatment is an ffmpeg audio
// filter on the whole track (as ingest would run it on the speech branch), or RNNoise:
// `rnnoise` on each sentence as the transcription thread hears it, `rnnoise-gated` the same on
// the sentences less than 30 dB above their noise floor only (the service's
// DenoisedTranscriber), `rnnoise-track` on the whole track (a network state that also hears
// the noise between sentences). Fast, to choose what the live benchmark then runs
// (speech-noise-live.ts). See ops/bench/README-speech-noise.md.
import { execFile } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { readConfig } from '../../bus/config.ts';
import { DenoisedTranscriber } from '../../actors/speech/denoised-transcriber.ts';
import { SpeechDenoiser } from '../../actors/speech/denoiser.ts';
import { SpeechToText, type Transcriber } from '../../actors/speech/moonshine.ts';
import { pcmToFloat } from '../support/voice-media.ts';
import { wordErrors } from '../support/word-error-rate.ts';
import { CONDITIONS, conditionName, mixedTrack, readSpeech, type Corpus } from './lib/speech-corpus.ts';
import { SAMPLE_RATE, toPcm } from './lib/speech.ts';
import { fixed, printTable } from './lib/stats.ts';

const config = readConfig();

/** Treatments tried on the speech: ffmpeg audio filters, '' for ingest as it is, and the RNNoise ones. */
const TREATMENTS = (process.env.SPEECH_NOISE_FILTERS?.split(';') ?? [
  '',
  'highpass=f=120',
  'afftdn=nf=-30:tn=1',
  'afftdn=nr=20:nf=-30:tn=1',
  'anlmdn',
  'rnnoise',
  'rnnoise-gated',
  'rnnoise-track',
]);

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

/** CPU seconds spent in the in-process treatments (RNNoise), per treatment, over every condition. */
const treatmentCpu = new Map<string, number>();

function timed(treatment: string, work: () => Float32Array): Float32Array {
  const cpu = process.cpuUsage();
  const result = work();
  const used = process.cpuUsage(cpu);
  treatmentCpu.set(treatment, (treatmentCpu.get(treatment) ?? 0) + (used.user + used.system) / 1e6);
  return result;
}

const MARGIN = Math.round(0.2 * SAMPLE_RATE);

type SentenceTreatment = (sentence: Float32Array) => Float32Array;

async function errorRate(
  stt: Transcriber,
  corpus: Corpus,
  track: Float32Array,
  perSentence: SentenceTreatment,
): Promise<{ wer: number; worst: string }> {
  let errors = 0;
  let words = 0;
  let worst = { errors: -1, text: '' };
  for (const sentence of corpus.sentences) {
    const from = Math.max(0, sentence.start - MARGIN);
    const text = await stt.transcribe(perSentence(track.subarray(from, sentence.start + sentence.length + MARGIN)));
    const counted = wordErrors(sentence.text, text);
    errors += counted.errors;
    words += counted.words;
    if (counted.errors > worst.errors) worst = { errors: counted.errors, text };
  }
  return { wer: errors / words, worst: worst.text };
}

const dir = join(config.varDir, 'bench', `speech-noise-${process.pid}`);
mkdirSync(dir, { recursive: true });
try {
  const corpus = await readSpeech(dir);
  const stt = await SpeechToText.load(config.modelsDir);
  const denoiser = await SpeechDenoiser.load();
  const gated = new DenoisedTranscriber(stt, denoiser);
  const asIs: SentenceTreatment = (sentence) => sentence;
  const treated = async (track: Float32Array, treatment: string) => {
    if (treatment === 'rnnoise') return errorRate(stt, corpus, track, (sentence) => timed(treatment, () => denoiser.denoise(sentence)));
    if (treatment === 'rnnoise-gated') return errorRate(gated, corpus, track, asIs);
    const whole = treatment === 'rnnoise-track' ? timed(treatment, () => denoiser.denoise(track)) : await filtered(track, treatment);
    return errorRate(stt, corpus, whole, asIs);
  };
  const words = corpus.sentences.reduce((sum, s) => sum + wordErrors(s.text, s.text).words, 0);
  const rows: string[][] = [];
  const worst: string[][] = [];
  for (const condition of CONDITIONS) {
    const track = mixedTrack(corpus, condition);
    const row = [conditionName(condition)];
    for (const treatment of TREATMENTS) {
      const result = await treated(track, treatment);
      row.push(fixed(result.wer, 3));
      worst.push([conditionName(condition), treatment || 'none', result.worst]);
    }
    rows.push(row);
    console.log(row.join('  '));
  }
  printTable(
    `Word error rate on files (${corpus.sentences.length} sentences, ${words} words, ${fixed(corpus.track.length / SAMPLE_RATE)} s), per treatment of the speech`,
    ['condition', ...TREATMENTS.map((treatment) => treatment || 'none')],
    rows,
  );
  const speechMinutes = corpus.sentences.reduce((sum, s) => sum + s.length + 2 * MARGIN, 0) / SAMPLE_RATE / 60;
  const trackMinutes = corpus.track.length / SAMPLE_RATE / 60;
  printTable(
    'CPU of the in-process treatments, per minute of audio they denoised (ffmpeg filters: ffmpeg -benchmark)',
    ['treatment', 'ms per minute'],
    [...treatmentCpu].map(([treatment, seconds]) => [
      treatment,
      fixed((1000 * seconds) / (CONDITIONS.length * (treatment === 'rnnoise' ? speechMinutes : trackMinutes)), 0),
    ]),
  );
  printTable('The worst-transcribed sentence of each run', ['condition', 'filter', 'transcript'], worst);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

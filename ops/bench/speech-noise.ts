// Speech under noise, on files: the word error rate of Moonshine tiny on read speech, clean and
// with pink noise or music under it at 20, 10 and 5 dB SNR, each mix passed through every
// candidate ffmpeg audio filter first (as ingest would run it on the speech branch), each
// sentence transcribed whole. Fast, to choose the filter the live benchmark then runs
// (speech-noise-live.ts). See ops/bench/README-speech-noise.md.
import { execFile } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { readConfig } from '../../bus/config.ts';
import { SpeechToText } from '../../actors/speech/moonshine.ts';
import { pcmToFloat } from '../support/voice-media.ts';
import { wordErrors } from '../support/word-error-rate.ts';
import { CONDITIONS, conditionName, mixedTrack, readSpeech, type Corpus } from './lib/speech-corpus.ts';
import { SAMPLE_RATE, toPcm } from './lib/speech.ts';
import { fixed, printTable } from './lib/stats.ts';

const config = readConfig();

/** ffmpeg audio filters tried on the speech branch; '' is ingest as it is. */
const FILTERS = (process.env.SPEECH_NOISE_FILTERS?.split(';') ?? [
  '',
  'highpass=f=120',
  'afftdn=nf=-30:tn=1',
  'afftdn=nr=20:nf=-30:tn=1',
  'anlmdn',
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

const MARGIN = Math.round(0.2 * SAMPLE_RATE);

async function errorRate(stt: SpeechToText, corpus: Corpus, track: Float32Array): Promise<{ wer: number; worst: string }> {
  let errors = 0;
  let words = 0;
  let worst = { errors: -1, text: '' };
  for (const sentence of corpus.sentences) {
    const from = Math.max(0, sentence.start - MARGIN);
    const text = await stt.transcribe(track.subarray(from, sentence.start + sentence.length + MARGIN));
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
  const words = corpus.sentences.reduce((sum, s) => sum + wordErrors(s.text, s.text).words, 0);
  const rows: string[][] = [];
  const worst: string[][] = [];
  for (const condition of CONDITIONS) {
    const track = mixedTrack(corpus, condition);
    const row = [conditionName(condition)];
    for (const filter of FILTERS) {
      const result = await errorRate(stt, corpus, await filtered(track, filter));
      row.push(fixed(result.wer, 3));
      worst.push([conditionName(condition), filter || 'none', result.worst]);
    }
    rows.push(row);
    console.log(row.join('  '));
  }
  printTable(
    `Word error rate on files (${corpus.sentences.length} sentences, ${words} words, ${fixed(corpus.track.length / SAMPLE_RATE)} s), per ffmpeg filter on the speech`,
    ['condition', ...FILTERS.map((filter) => filter || 'none')],
    rows,
  );
  printTable('The worst-transcribed sentence of each run', ['condition', 'filter', 'transcript'], worst);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

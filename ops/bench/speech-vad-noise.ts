// Does the VAD still find speech under noise? Silero's probability for each 32 ms step of the
// benchmark's speech and of the held-out passages, clean and under each noise condition. The
// steps the clean track calls speech (at or above the segmenter's start threshold) are the
// reference: the share of them still speech under noise (at or above the start threshold, and
// at or above the threshold that keeps a segment going), and of the steps the clean track calls
// silence (below 0.2), the share noise makes speech. A VAD that lost speech under noise would
// want thresholds that follow the noise floor. See ops/bench/README-speech-noise.md.
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { readConfig } from '../../bus/index.ts';
import { readOpsConfig } from '../ops-config.ts';
import { DEFAULT_SEGMENTER, VAD_STEP, VadStream, VoiceActivityModel } from '../../actors/voice/index.ts';
import { CONDITIONS, conditionName, mixedTrack, readHeldOut, readSpeech } from './lib/speech-corpus.ts';
import { fixed, printTable } from './lib/stats.ts';

const config = readConfig();
const tooling = readOpsConfig();
const { startThreshold, endThreshold } = DEFAULT_SEGMENTER;
const SILENT_BELOW = 0.2;

/** The speech probability of each whole step of `track`, as one stream of the host sees them. */
async function probabilities(vad: VoiceActivityModel, track: Float32Array): Promise<Float32Array> {
  const stream = new VadStream();
  const steps = new Float32Array(Math.floor(track.length / VAD_STEP));
  for (let i = 0; i < steps.length; i++) {
    stream.load(track.subarray(i * VAD_STEP, (i + 1) * VAD_STEP));
    steps[i] = (await vad.probabilities([stream]))[0]!;
  }
  return steps;
}

const share = (part: number, whole: number) => fixed(whole === 0 ? 0 : part / whole, 3);

const dir = join(config.varDir, 'bench', `speech-vad-noise-${process.pid}`);
mkdirSync(dir, { recursive: true });
try {
  const vad = await VoiceActivityModel.load(config.modelsDir);
  const sets = [['sentences', await readSpeech(tooling.mediaDir, dir)], ['held out', await readHeldOut(dir)]] as const;
  const rows: string[][] = [];
  for (const [name, corpus] of sets) {
    const clean = await probabilities(vad, corpus.track);
    for (const condition of CONDITIONS.filter(({ noise }) => noise !== 'clean')) {
      const noisy = await probabilities(vad, mixedTrack(corpus, condition));
      let speech = 0, started = 0, kept = 0, silent = 0, falseStarts = 0;
      clean.forEach((probability, i) => {
        if (probability >= startThreshold) {
          speech++;
          if (noisy[i]! >= startThreshold) started++;
          if (noisy[i]! >= endThreshold) kept++;
        } else if (probability < SILENT_BELOW) {
          silent++;
          if (noisy[i]! >= startThreshold) falseStarts++;
        }
      });
      const row = [name, conditionName(condition), `${speech}`, share(started, speech), share(kept, speech), `${silent}`, share(falseStarts, silent)];
      rows.push(row);
      console.log(row.join('  '));
    }
  }
  printTable(
    'Silero VAD under noise, per 32 ms step, against the same speech clean',
    ['speech', 'condition', 'speech steps (clean)', `still >= ${startThreshold}`, `still >= ${endThreshold}`, `silent steps (clean, < ${SILENT_BELOW})`, `now >= ${startThreshold}`],
    rows,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}

// Speech under noise, cut as the service cuts it: each condition of speech-noise.ts through the
// host's own VAD and segmenter (VoiceStreams, as ingest's PCM reaches them), each segment
// transcribed by the service's transcriber, the whole transcript scored. The live path without
// the stream: no encoder, no loop to join, a few minutes for every condition, so it can
// compare where segments end and who transcribes them. Two sets of speech: the benchmark's
// sentences, scored per voice, and passages kept apart from every choice (readHeldOut).
// SPEECH_SEGMENTS_END_SILENCE takes the seconds of pause that end a short segment,
// comma-separated (default: the service's, and 0.5 s, what it was before);
// SPEECH_SEGMENTS_TRANSCRIBERS takes `service`, `tiny` and `base` (default: the service).
// See ops/bench/README-speech-noise.md.
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { readConfig } from '../../bus/index.ts';
import { readOpsConfig } from '../ops-config.ts';
import { thisProcessorMultipliesSignedBytesExactly } from '../../actors/models/index.ts';
import { NoiseRoutedTranscriber, SpeechToText } from '../../actors/speech/index.ts';
import { DEFAULT_SEGMENTER, type SegmenterOptions, VoiceActivityModel, VoiceStreams } from '../../actors/voice/index.ts';
import { wordErrors } from '../support/word-error-rate.ts';
import { CONDITIONS, VOICES, conditionName, errorRatePerVoice, mixedTrack, readHeldOut, readSpeech, referenceText, type Corpus } from './lib/speech-corpus.ts';
import { SAMPLE_RATE, toPcm } from './lib/speech.ts';
import { fixed, printTable } from './lib/stats.ts';

const config = readConfig();
const tooling = readOpsConfig();
const signedWeights = thisProcessorMultipliesSignedBytesExactly();
const endSilences = (process.env.SPEECH_SEGMENTS_END_SILENCE ?? `${DEFAULT_SEGMENTER.endSilence / SAMPLE_RATE},0.5`).split(',').map(Number);
const TRANSCRIBERS = ['service', 'tiny', 'base'] as const;
const transcriberNames = (process.env.SPEECH_SEGMENTS_TRANSCRIBERS ?? 'service').split(',').map((name) => {
  if (!(TRANSCRIBERS as readonly string[]).includes(name)) throw new Error(`SPEECH_SEGMENTS_TRANSCRIBERS takes ${TRANSCRIBERS.join(', ')}; got "${name}"`);
  return name as (typeof TRANSCRIBERS)[number];
});
/** Each pause with each transcriber: the table's column groups. */
const variants = endSilences.flatMap((seconds) => transcriberNames.map((transcriber) => ({ seconds, transcriber })));
const variantName = ({ seconds, transcriber }: (typeof variants)[number]) => `${seconds} s${transcriberNames.length > 1 ? ` ${transcriber}` : ''}`;

/** The segments the host would cut from `track`, each as the samples it would transcribe. */
async function segmentsOf(vad: VoiceActivityModel, track: Float32Array, segmenter: SegmenterOptions): Promise<Float32Array[]> {
  const segments: Float32Array[] = [];
  const streams = new VoiceStreams({
    model: vad,
    maxBacklogSamples: Infinity,
    onShed: () => {},
    onFailed: (_stream, error) => {
      throw error;
    },
  });
  const stream = streams.open({ session: 'bench', startOffset: 0, segmenter, onSecond: () => {}, onSegment: ({ samples }) => segments.push(samples.slice()) });
  streams.write(stream, toPcm(track));
  await streams.close(stream);
  return segments;
}

const dir = join(config.varDir, 'bench', `speech-segments-${process.pid}`);
mkdirSync(dir, { recursive: true });
try {
  const [corpus, heldOut, vad, tiny, base] = await Promise.all([
    readSpeech(tooling.mediaDir, dir),
    readHeldOut(dir),
    VoiceActivityModel.load(config.modelsDir),
    SpeechToText.load(config.modelsDir, 'tiny', signedWeights),
    SpeechToText.load(config.modelsDir, 'base', signedWeights),
  ]);
  const transcribers = { service: new NoiseRoutedTranscriber(tiny, base, config.noisySpeechBelowSnrDb), tiny, base };

  /** Segments cut from `speech` under `condition` with each pause, and their transcript by each transcriber. */
  async function transcripts(speech: Corpus, condition: (typeof CONDITIONS)[number]): Promise<{ segments: number; text: string }[]> {
    const track = mixedTrack(speech, condition);
    const results = [];
    for (const seconds of endSilences) {
      const segments = await segmentsOf(vad, track, { ...DEFAULT_SEGMENTER, endSilence: Math.round(seconds * SAMPLE_RATE) });
      for (const transcriber of transcriberNames) {
        const texts: string[] = [];
        for (const samples of segments) texts.push(await transcribers[transcriber].transcribe(samples));
        results.push({ segments: segments.length, text: texts.join(' ') });
      }
    }
    return results;
  }

  // Per variant: the WER summed over conditions, for each voice and for the held-out passages.
  const columns = [...VOICES, 'held out'];
  const sums = variants.map(() => columns.map(() => 0));
  const rows: string[][] = [];
  for (const condition of CONDITIONS) {
    const [ofCorpus, ofHeldOut] = [await transcripts(corpus, condition), await transcripts(heldOut, condition)];
    const row = [conditionName(condition)];
    variants.forEach((_, i) => {
      const perVoice = errorRatePerVoice(corpus, ofCorpus[i]!.text);
      const held = wordErrors(referenceText(heldOut), ofHeldOut[i]!.text);
      const rates = [...VOICES.map((voice) => perVoice.get(voice)!), held.errors / held.words];
      rates.forEach((rate, j) => (sums[i]![j]! += rate));
      row.push(`${ofCorpus[i]!.segments} / ${ofHeldOut[i]!.segments}`, ...rates.map((rate) => fixed(rate, 3)));
    });
    rows.push(row);
    console.log(row.join('  '));
  }
  rows.push(['mean', ...sums.flatMap((sum) => ['', ...sum.map((total) => fixed(total / CONDITIONS.length, 3))])]);
  const { longLength, longEndSilence } = DEFAULT_SEGMENTER;
  printTable(
    `Word error rate of the transcripts of the segments the service's VAD cuts (by ${transcriberNames.join(', ')}), per pause that ends a segment shorter than ${longLength / SAMPLE_RATE} s (a longer one ends at ${longEndSilence / SAMPLE_RATE} s); held out: ${heldOut.sentences.length} sentences, two to a passage, espeak-ng en-gb`,
    ['condition', ...variants.flatMap((variant) => [`${variantName(variant)}: segments / held out`, ...columns.map((column) => `${variantName(variant)}: ${column}`)])],
    rows,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}

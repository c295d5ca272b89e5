// Speech in a crowd, cut and transcribed as the service does it: recorded read speech under
// six overlapping talkers at 20, 10 and 5 dB SNR and under one competing talker at 10 dB,
// through the host's VAD and segmenter, each segment transcribed by the service's transcriber.
// Per condition and part of the speakers (tuning, held out): the word error rate, the
// segments cut, the share of sentences a segment ends with (within 1.5 s of the sentence's
// end, also the second time through the track looped, as on a stream the rule has learnt), and
// how long after its end a sentence's transcript comes. The held-out part is the one to report:
// nothing was chosen on its voices. A second table puts 15 s of the crowd alone before, between
// and after the sentences, and counts the words written over it.
// SPEECH_CROWD_QUIETER_BY_DB sets how far under the speaker a segment is the background's,
// SPEECH_CROWD_STANDS_OUT_BY_DB how far above its own floor a segment must stand to be taken for
// a speaker while none is known (`off`: no such rule), and SPEECH_CROWD_FLAT_QUIETER_BY_DB how
// far under the speaker a segment that does not stand out is the background's (`off`: never).
// See ops/bench/README-speech-crowd.md.
import { readConfig } from '../../bus/index.ts';
import { readOpsConfig } from '../ops-config.ts';
import { thisProcessorMultipliesSignedBytesExactly } from '../../actors/models/index.ts';
import { NoiseRoutedTranscriber, segmentSnrDb, SpeechToText } from '../../actors/speech/index.ts';
import { DEFAULT_SEGMENTER, VoiceActivityModel } from '../../actors/voice/index.ts';
import { wordErrors } from '../support/word-error-rate.ts';
import { CROWD_ALONE_SECONDS, CROWD_CONDITIONS, PARTS, crowdTrack, readPart, withCrowdAlone } from './lib/crowd-corpus.ts';
import { ENDS_WITHIN_SECONDS, shareEndingASegment, transcriptLatencies } from './lib/sentence-ends.ts';
import { cutSegments } from './lib/service-segments.ts';
import { referenceText, type Corpus, type Sentence } from './lib/speech-corpus.ts';
import { SAMPLE_RATE } from './lib/speech.ts';
import { fixed, percentile, printTable } from './lib/stats.ts';

const config = readConfig();
const tooling = readOpsConfig();
const signedWeights = thisProcessorMultipliesSignedBytesExactly();

const [corpora, vad, tiny, base] = await Promise.all([
  Promise.all(PARTS.map((part) => readPart(tooling.mediaDir, part))),
  VoiceActivityModel.load(config.modelsDir),
  SpeechToText.load(config.modelsDir, 'tiny', signedWeights),
  SpeechToText.load(config.modelsDir, 'base', signedWeights),
]);
const service = new NoiseRoutedTranscriber(tiny, base, config.noisySpeechBelowSnrDb);
/** A room rule's margin from the environment: a number of dB, `off` for `never` (the margin no segment meets), or the default. */
const margin = (name: string, never: number, fallback: number) => {
  const value = process.env[name];
  return value === undefined ? fallback : value === 'off' ? never : Number(value);
};
const segmenter = {
  ...DEFAULT_SEGMENTER,
  speaker: {
    ...DEFAULT_SEGMENTER.speaker,
    quieterByDb: margin('SPEECH_CROWD_QUIETER_BY_DB', Infinity, DEFAULT_SEGMENTER.speaker.quieterByDb),
    standsOutByDb: margin('SPEECH_CROWD_STANDS_OUT_BY_DB', -Infinity, DEFAULT_SEGMENTER.speaker.standsOutByDb),
    flatQuieterByDb: margin('SPEECH_CROWD_FLAT_QUIETER_BY_DB', Infinity, DEFAULT_SEGMENTER.speaker.flatQuieterByDb),
  },
};

/**
 * The share of sentences ending a segment the second time through `track` played twice: what a
 * stream shows once the rule has learnt its background (the first seconds of a track teach it).
 */
async function endingASegmentSecondTime(track: Float32Array, sentences: readonly Sentence[]): Promise<number> {
  const twice = new Float32Array(2 * track.length);
  twice.set(track);
  twice.set(track, track.length);
  const segments = await cutSegments(vad, twice, segmenter);
  return shareEndingASegment(sentences.map((sentence) => ({ ...sentence, start: sentence.start + track.length })), segments);
}

const rows: string[][] = [];
for (const condition of CROWD_CONDITIONS) {
  for (const [p, part] of PARTS.entries()) {
    const corpus = corpora[p]!;
    const track = await crowdTrack(tooling.mediaDir, corpus, condition);
    const segments = await cutSegments(vad, track, segmenter);
    const secondTime = await endingASegmentSecondTime(track, corpus.sentences);
    const timed = [];
    for (const segment of segments) {
      const started = performance.now();
      const text = await service.transcribe(segment.samples);
      timed.push({ ...segment, text, snrDb: segmentSnrDb(segment.samples), transcribedIn: (performance.now() - started) / 1000 });
    }
    const { errors, words } = wordErrors(referenceText(corpus), timed.map((segment) => segment.text).join(' '));
    const latencies = transcriptLatencies(corpus.sentences, timed);
    const row = [
      condition.name,
      part,
      fixed(errors / words, 3),
      `${segments.length} / ${corpus.sentences.length}`,
      fixed(shareEndingASegment(corpus.sentences, timed), 2),
      fixed(secondTime, 2),
      `${fixed(percentile(latencies, 50), 1)} / ${fixed(Math.max(...latencies), 1)}`,
      fixed(percentile(timed.map((segment) => segment.snrDb), 50), 1),
    ];
    rows.push(row);
    console.log(row.join('  '));
    if (process.env.SPEECH_CROWD_TRANSCRIPTS) for (const segment of timed) console.log(`  ${fixed(segment.start, 1)}-${fixed(segment.end, 1)} s, ${fixed(segment.snrDb, 1)} dB: ${segment.text}`);
  }
}
printTable(
  `Speech in a crowd through the service's VAD, segmenter and transcriber (files path; tuning: LibriVox and JFK, held out: CMU ARCTIC, ${corpora[1]!.sentences.length} sentences)`,
  ['condition', 'speakers', 'WER', 'segments / sentences', `sentences ending a segment (within ${ENDS_WITHIN_SECONDS} s)`, 'the same, second time through', 'transcript latency, median / max (s)', 'segment SNR estimate, median (dB)'],
  rows,
);

const wordCount = (text: string) => text.split(/\s+/).filter(Boolean).length;
const holdsASentence = (corpus: Corpus, segment: { start: number; end: number }) =>
  corpus.sentences.some((sentence) => sentence.start / SAMPLE_RATE < segment.end && (sentence.start + sentence.length) / SAMPLE_RATE > segment.start);

/** Words written over the crowd alone, before the speaker's first sentence and after it, and the WER of the rest. */
const aloneRows: string[][] = [];
for (const condition of CROWD_CONDITIONS.filter((condition) => condition.talkers.length > 0)) {
  for (const [p, part] of PARTS.entries()) {
    const corpus = withCrowdAlone(corpora[p]!, SAMPLE_RATE);
    const firstSentence = corpus.sentences[0]!.start / SAMPLE_RATE;
    const words = { before: 0, after: 0 };
    const spoken: string[] = [];
    for (const segment of await cutSegments(vad, await crowdTrack(tooling.mediaDir, corpus, condition), segmenter)) {
      const text = await service.transcribe(segment.samples);
      if (holdsASentence(corpus, segment)) spoken.push(text);
      else words[segment.end <= firstSentence ? 'before' : 'after'] += wordCount(text);
      if (process.env.SPEECH_CROWD_TRANSCRIPTS) console.log(`  ${fixed(segment.start, 1)}-${fixed(segment.end, 1)} s: ${text}`);
    }
    const { errors, words: reference } = wordErrors(referenceText(corpus), spoken.join(' '));
    const row = [condition.name, part, `${words.before}`, `${words.after}`, fixed(errors / reference, 3)];
    aloneRows.push(row);
    console.log(row.join('  '));
  }
}
printTable(
  `The crowd alone for ${CROWD_ALONE_SECONDS} s before, between and after the sentences (files path)`,
  ['condition', 'speakers', 'words written over the crowd alone, before the first sentence', 'the same, after it (30 s of crowd alone)', 'WER of the segments holding a sentence'],
  aloneRows,
);

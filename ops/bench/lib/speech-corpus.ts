// The read speech of the speech-under-noise benchmark: sentences with known text, spoken by
// espeak-ng (not heard by anything tuned on this project), and JFK's "ask not" sentence
// (media the assets setup fetches, with its published transcript), laid end to end with pauses
// in one 16 kHz track, as a speaker reads them. Where each sentence sits is kept, to cut the
// track into sentences for transcription on files.
import { makeNoise, mixAtSnr, type NoiseKind } from './noise.ts';
import { SAMPLE_RATE, jfkSamples, spokenSamples } from './speech.ts';

export const JFK_TEXT = 'And so my fellow Americans, ask not what your country can do for you, ask what you can do for your country.';

const SENTENCES = [
  'The service was horrible and the food was cold, so we left before the dessert.',
  'Nobody expected the small team to finish the bridge before the winter storms.',
  'I would rather be honest and lose the vote than win it with a promise I cannot keep.',
  'Please send the signed contract to the office by Friday afternoon.',
  'The children painted the old fence bright yellow and laughed all day.',
  'Our train was delayed for two hours because of a broken signal near the station.',
  'She thanked everyone for coming and said the evening had been wonderful.',
  'Prices for fresh vegetables rose sharply after the long dry summer.',
];

/** Seconds of silence between sentences: a reader's pause, long enough for the VAD to end a segment. */
export const PAUSE_SECONDS = 1.5;

export interface Sentence {
  text: string;
  /** Where it starts in the track, and its length, in samples. */
  start: number;
  length: number;
}

export interface Corpus {
  track: Float32Array;
  sentences: Sentence[];
}

export async function readSpeech(dir: string): Promise<Corpus> {
  const spoken = await Promise.all(SENTENCES.map((text, i) => spokenSamples(text, dir, `sentence-${i}`)));
  const parts = [...spoken.map((samples, i) => ({ text: SENTENCES[i]!, samples })), { text: JFK_TEXT, samples: await jfkSamples() }];
  const pause = Math.round(PAUSE_SECONDS * SAMPLE_RATE);
  const track = new Float32Array(parts.reduce((sum, part) => sum + part.samples.length + pause, 0));
  const sentences: Sentence[] = [];
  let at = 0;
  for (const { text, samples } of parts) {
    track.set(samples, at);
    sentences.push({ text, start: at, length: samples.length });
    at += samples.length + pause;
  }
  return { track, sentences };
}

/** The full reference text, in reading order. */
export const referenceText = (corpus: Corpus) => corpus.sentences.map((sentence) => sentence.text).join(' ');

/** Clean, and each kind of noise at 20, 10 and 5 dB SNR. */
export const CONDITIONS: { noise: NoiseKind | 'clean'; snrDb: number }[] = [
  { noise: 'clean', snrDb: Infinity },
  ...(['pink', 'music'] as const).flatMap((noise) => [20, 10, 5].map((snrDb) => ({ noise, snrDb }))),
];

export const conditionName = ({ noise, snrDb }: (typeof CONDITIONS)[number]) => (noise === 'clean' ? 'clean' : `${noise} ${snrDb} dB`);

export function mixedTrack(corpus: Corpus, condition: (typeof CONDITIONS)[number]): Float32Array {
  if (condition.noise === 'clean') return corpus.track;
  return mixAtSnr(corpus.track, makeNoise(condition.noise, corpus.track.length), condition.snrDb);
}

// The read speech of the speech-under-noise benchmark, in two voices:
// - recorded people: five sentences of a LibriVox reading of Sense and Sensibility (the
//   sentences pocketsphinx's Debian test data ships, with their published transcript), and
//   JFK's "ask not" sentence (whisper.cpp's sample, with its published transcript);
// - a synthetic voice: sentences with known text spoken by espeak-ng, which no speech model was
//   trained on.
// The service's 30 dB noise threshold was set on the espeak-ng and JFK sentences, the pause that
// ends a speech segment on all of them; a third set, passages in espeak-ng's British voice
// (readHeldOut), was kept apart to check that pause. The sentences are laid end to end with
// pauses in one 16 kHz track, as a speaker reads them; where each sentence sits is kept, to cut
// the track into sentences for transcription on files and to score each voice apart.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { JFK_TEXT, pcmToFloat, wavPcm } from '../../support/voice-media.ts';
import { errorsPerReferenceWord, words } from '../../support/word-error-rate.ts';
import { makeNoise, mixAtSnr, voicedRms, type NoiseKind } from '../../support/noise.ts';
import { SAMPLE_RATE, jfkSamples, spokenSamples } from './speech.ts';


/**
 * The LibriVox sentences: file name under the media folder's speech/, and the transcript as
 * published beside them (the reader's own "a more a amiable" included).
 */
export const RECORDED: ReadonlyArray<[file: string, text: string]> = [
  ['sense_and_sensibility_01_austen_64kb-0870.wav', 'and mister john dashwood had then leisure to consider how much there might be prudently in his power to do for them'],
  ['sense_and_sensibility_01_austen_64kb-0880.wav', 'he was not an ill disposed young man'],
  ['sense_and_sensibility_01_austen_64kb-0890.wav', 'unless to be rather cold hearted and rather selfish is to be ill disposed'],
  ['sense_and_sensibility_01_austen_64kb-0920.wav', 'had he married a more a amiable woman he might have been made still more respectable than he was'],
  ['sense_and_sensibility_01_austen_64kb-0930.wav', 'he might even have been made amiable himself'],
];

const SPOKEN = [
  'The service was horrible and the food was cold, so we left before the dessert.',
  'Nobody expected the small team to finish the bridge before the winter storms.',
  'I would rather be honest and lose the vote than win it with a promise I cannot keep.',
  'Please send the signed contract to the office by Friday afternoon.',
  'The children painted the old fence bright yellow and laughed all day.',
  'Our train was delayed for two hours because of a broken signal near the station.',
  'She thanked everyone for coming and said the evening had been wonderful.',
  'Prices for fresh vegetables rose sharply after the long dry summer.',
];

/**
 * Every sentence is brought to this voiced RMS (-20 dBFS), so that each one sits at the
 * condition's SNR: the recordings differ by up to 11 dB.
 */
const SPEECH_LEVEL = 0.1;

export function atSpeechLevel(samples: Float32Array): Float32Array {
  const gain = SPEECH_LEVEL / voicedRms(samples);
  return samples.map((sample) => sample * gain);
}

/** Seconds of silence between sentences: a reader's pause, long enough for the VAD to end a segment. */
export const PAUSE_SECONDS = 1.5;

export type Voice = 'recorded' | 'espeak-ng';
export const VOICES: readonly Voice[] = ['recorded', 'espeak-ng'];

export interface Sentence {
  text: string;
  voice: Voice;
  /** Where it starts in the track, and its length, in samples. */
  start: number;
  length: number;
}

export interface Corpus {
  track: Float32Array;
  sentences: Sentence[];
}

/** The corpus, the recorded sentences read from `mediaDir`; espeak-ng's scratch files go in `dir`. */
export async function readSpeech(mediaDir: string, dir: string): Promise<Corpus> {
  const recorded = await Promise.all(
    RECORDED.map(async ([file, text]) => ({ text, voice: 'recorded' as const, samples: pcmToFloat(wavPcm(await readFile(join(mediaDir, 'speech', file)))) })),
  );
  const spoken = await Promise.all(
    SPOKEN.map(async (text, i) => ({ text, voice: 'espeak-ng' as const, samples: await spokenSamples(text, dir, `sentence-${i}`) })),
  );
  return laidEndToEnd([...recorded, { text: JFK_TEXT, voice: 'recorded' as const, samples: await jfkSamples() }, ...spoken]);
}

/**
 * Passages nothing here was chosen on, to check a choice made on the sentences above: two
 * sentences each, in espeak-ng's British voice (the sentences above are in its American one),
 * with a speaker's pause between them, shorter than a reader's between passages
 * (BETWEEN_SENTENCES).
 */
const HELD_OUT = [
  ['When the meeting ended, nobody wanted to leave.', 'The coffee was still warm, and the rain had not stopped.'],
  ['Turn left at the bakery, then walk two blocks.', 'The museum is on your right, next to the bank.'],
  ['I am sorry, but the flight has been cancelled.', 'We will book you on the next one, tomorrow morning.'],
  ['She opened the letter slowly.', 'Inside, there was a photograph of a house by the sea.'],
  ['Thank you all for coming tonight.', 'Without your help, this project would never have been finished.'],
  ['The weather was terrible on Monday, and worse on Tuesday.', 'By Friday, however, the sun was out.'],
];

/** Seconds between the sentences of a held-out passage, in turn. */
const BETWEEN_SENTENCES = [0.6, 0.8, 1.0];

export async function readHeldOut(dir: string): Promise<Corpus> {
  const parts = await Promise.all(
    HELD_OUT.flatMap((passage, i) =>
      passage.map(async (text, k) => ({
        text,
        voice: 'espeak-ng' as const,
        samples: await spokenSamples(text, dir, `held-out-${i}-${k}`, 'en-gb'),
        pause: k < passage.length - 1 ? BETWEEN_SENTENCES[i % BETWEEN_SENTENCES.length]! : PAUSE_SECONDS,
      })),
    ),
  );
  return laidEndToEnd(parts);
}

/** `parts` in one track, each followed by its pause (a reader's, PAUSE_SECONDS, unless given). */
export function laidEndToEnd(parts: { text: string; voice: Voice; samples: Float32Array; pause?: number }[]): Corpus {
  const pauseOf = (part: (typeof parts)[number]) => Math.round((part.pause ?? PAUSE_SECONDS) * SAMPLE_RATE);
  const track = new Float32Array(parts.reduce((sum, part) => sum + part.samples.length + pauseOf(part), 0));
  const sentences: Sentence[] = [];
  let at = 0;
  for (const part of parts) {
    track.set(atSpeechLevel(part.samples), at);
    sentences.push({ text: part.text, voice: part.voice, start: at, length: part.samples.length });
    at += part.samples.length + pauseOf(part);
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

/** Word error rate per voice of `text` against the whole reference: each edit counts for the voice of the word it is charged to. */
export function errorRatePerVoice(corpus: Corpus, text: string): Map<Voice, number> {
  const voiceOfWord = corpus.sentences.flatMap((sentence) => words(sentence.text).map(() => sentence.voice));
  const charged = errorsPerReferenceWord(referenceText(corpus), text);
  return new Map(
    VOICES.map((voice) => {
      const mine = voiceOfWord.flatMap((of, i) => (of === voice ? [charged[i]!] : []));
      return [voice, mine.reduce((sum, n) => sum + n, 0) / mine.length];
    }),
  );
}

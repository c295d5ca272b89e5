// The read speech of the speech-under-noise benchmark, in two voices:
// - recorded people: five sentences of a LibriVox reading of Sense and Sensibility (the
//   sentences pocketsphinx's Debian test data ships, with their published transcript), and
//   JFK's "ask not" sentence (whisper.cpp's sample, with its published transcript);
// - a synthetic voice: sentences with known text spoken by espeak-ng, which no speech model was
//   trained on.
// The LibriVox sentences were heard by nothing tuned on this project (the service's 30 dB noise
// threshold was set on the others). The sentences are laid end to end with pauses in one 16 kHz
// track, as a speaker reads them; where each sentence sits is kept, to cut the track into
// sentences for transcription on files and to score each voice apart.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pcmToFloat, wavPcm } from '../../support/voice-media.ts';
import { makeNoise, mixAtSnr, voicedRms, type NoiseKind } from './noise.ts';
import { SAMPLE_RATE, jfkSamples, spokenSamples } from './speech.ts';

export const JFK_TEXT = 'And so my fellow Americans, ask not what your country can do for you, ask what you can do for your country.';

/**
 * The LibriVox sentences: file name under the media folder's speech/, and the transcript as
 * published beside them (the reader's own "a more a amiable" included).
 */
const RECORDED: ReadonlyArray<[file: string, text: string]> = [
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

function atSpeechLevel(samples: Float32Array): Float32Array {
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
  const parts = [...recorded, { text: JFK_TEXT, voice: 'recorded' as const, samples: await jfkSamples() }, ...spoken];
  const pause = Math.round(PAUSE_SECONDS * SAMPLE_RATE);
  const track = new Float32Array(parts.reduce((sum, part) => sum + part.samples.length + pause, 0));
  const sentences: Sentence[] = [];
  let at = 0;
  for (const { text, voice, samples } of parts) {
    track.set(atSpeechLevel(samples), at);
    sentences.push({ text, voice, start: at, length: samples.length });
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

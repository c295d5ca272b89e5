// Read speech in a crowd: recorded sentences of known text, and other people's voices under
// them. The speakers are split in two: the tuning part (the LibriVox reader and JFK, the voices
// the service's noise threshold and segment pauses were chosen on) and the held-out part (CMU
// ARCTIC speakers, chosen on nothing), so that a setting tuned here can be checked on voices
// it never heard. The crowd is seven SiSec 2011 talkers, none of them a speaker: six overlap as
// babble, the seventh is the single competing talker. Files: ops/assets/media.ts.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { seededRandom } from '../../support/seeded-random.ts';
import { JFK_TEXT, pcmToFloat, wavPcm } from '../../support/voice-media.ts';
import { mixAtSnr } from '../../support/noise.ts';
import { RECORDED, atSpeechLevel, laidEndToEnd, type Corpus } from './speech-corpus.ts';

/** CMU ARCTIC prompts as the corpus publishes them, for the files pyroomacoustics ships. */
const HELD_OUT: ReadonlyArray<[file: string, text: string]> = [
  ['cmu_arctic_us_aew_a0001.wav', 'Author of the danger trail, Philip Steels, etc.'],
  ['cmu_arctic_us_aew_a0002.wav', 'Not at this particular case, Tom, apologized Whittemore.'],
  ['cmu_arctic_us_aew_a0003.wav', 'For the twentieth time that evening the two men shook hands.'],
  ['cmu_arctic_us_axb_a0004.wav', "Lord, but I'm glad to see you again, Phil."],
  ['cmu_arctic_us_axb_a0005.wav', 'Will we ever forget it.'],
  ['cmu_arctic_us_axb_a0006.wav', "God bless 'em, I hope I'll go on seeing them forever."],
  ['arctic_a0007.wav', 'And you always want to see it in the superlative degree.'],
  ['arctic_a0008.wav', 'Gad, your letter came just in time.'],
  ['arctic_a0009.wav', 'He turned sharply, and faced Gregson across the table.'],
  ['arctic_a0010.wav', "I'm playing a single hand in what looks like a losing game."],
];

const BABBLE_TALKERS = ['female4_src_1', 'female4_src_2', 'female4_src_3', 'male4_src_1', 'male4_src_2', 'male4_src_3'];
const COMPETING_TALKER = 'female4_src_4';

export type Part = 'tuning' | 'held out';
export const PARTS: readonly Part[] = ['tuning', 'held out'];

const readWav = async (mediaDir: string, file: string) => pcmToFloat(wavPcm(await readFile(join(mediaDir, 'speech', file))));

const FRAME = 320; // 20 ms
/** Frames this far below the loudest are the recording's silence and noise, not the sentence (as noise.ts counts voiced frames). */
const SILENCE_BELOW_DB = 30;

/**
 * The sentence without the silence its recording starts and ends with (CMU ARCTIC's files hold
 * up to half a second of it), so that a sentence ends where its voice does and the pauses
 * between sentences are the reader's.
 */
function voiceOnly(samples: Float32Array): Float32Array {
  const levels: number[] = [];
  for (let at = 0; at + FRAME <= samples.length; at += FRAME) {
    let energy = 0;
    for (let i = at; i < at + FRAME; i++) energy += samples[i]! * samples[i]!;
    levels.push(Math.sqrt(energy / FRAME));
  }
  const floor = Math.max(...levels) * 10 ** (-SILENCE_BELOW_DB / 20);
  const first = levels.findIndex((level) => level > floor);
  let last = levels.length - 1;
  while (levels[last]! <= floor) last--;
  return samples.subarray(first * FRAME, (last + 1) * FRAME);
}

/** The sentences of one part, laid end to end with a reader's pauses. */
export async function readPart(mediaDir: string, part: Part): Promise<Corpus> {
  const files = part === 'tuning' ? [...RECORDED, ['jfk.wav', JFK_TEXT] as const] : HELD_OUT;
  return laidEndToEnd(await Promise.all(files.map(async ([file, text]) => ({ text, voice: 'recorded' as const, samples: voiceOnly(await readWav(mediaDir, file)) }))));
}

export interface CrowdCondition {
  name: string;
  /** Voices talking under the speaker, all at once; none for clean speech. */
  talkers: readonly string[];
  snrDb: number;
}

export const CROWD_CONDITIONS: readonly CrowdCondition[] = [
  { name: 'clean', talkers: [], snrDb: Infinity },
  ...[20, 10, 5].map((snrDb) => ({ name: `babble ${snrDb} dB`, talkers: BABBLE_TALKERS, snrDb })),
  { name: 'one talker 10 dB', talkers: [COMPETING_TALKER], snrDb: 10 },
];

/**
 * The talkers speaking at once for `samples`: each at the same voiced level, its 10-s recording
 * looped from a point drawn from `seed`, so that no two talkers' words line up and every run
 * mixes the same crowd.
 */
async function crowd(mediaDir: string, talkers: readonly string[], samples: number, seed: number): Promise<Float32Array> {
  const random = seededRandom(seed);
  const out = new Float32Array(samples);
  for (const talker of talkers) {
    const voice = atSpeechLevel(await readWav(mediaDir, `dev1_${talker}.wav`));
    const from = Math.floor(random() * voice.length);
    for (let i = 0; i < samples; i++) out[i]! += voice[(from + i) % voice.length]!;
  }
  return out;
}

export async function crowdTrack(mediaDir: string, corpus: Corpus, condition: CrowdCondition, seed = 11): Promise<Float32Array> {
  if (condition.talkers.length === 0) return corpus.track;
  return mixAtSnr(corpus.track, await crowd(mediaDir, condition.talkers, corpus.track.length, seed), condition.snrDb);
}

/** Seconds the crowd talks alone before the speaker's first sentence, between the two halves of the sentences, and after the last. */
export const CROWD_ALONE_SECONDS = 15;

/**
 * The corpus with the speaker silent for CROWD_ALONE_SECONDS before, halfway through and after
 * its sentences, as a speaker pauses on a stream while the room talks on; crowdTrack() mixes
 * the crowd over all of it at the condition's SNR against the speaker's voice.
 */
export function withCrowdAlone(corpus: Corpus, sampleRate: number): Corpus {
  const alone = CROWD_ALONE_SECONDS * sampleRate;
  const half = corpus.sentences[Math.floor(corpus.sentences.length / 2)]!.start;
  const track = new Float32Array(corpus.track.length + 3 * alone);
  track.set(corpus.track.subarray(0, half), alone);
  track.set(corpus.track.subarray(half), 2 * alone + half);
  const sentences = corpus.sentences.map((sentence) => ({ ...sentence, start: sentence.start + (sentence.start >= half ? 2 * alone : alone) }));
  return { track, sentences };
}

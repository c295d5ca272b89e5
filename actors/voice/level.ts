// Loudness in dBFS: 0 is a full-scale square wave, a full-scale sine is about -3 dB.

/** Below this a block counts as digital silence; keeps the level finite. */
export const SILENCE_DBFS = -100;

export function sumOfSquares(samples: Float32Array, start = 0, end = samples.length): number {
  let sum = 0;
  for (let i = start; i < end; i++) sum += samples[i]! * samples[i]!;
  return sum;
}

/** dBFS of a mean power (mean of squared samples in -1..1). */
export function dbfsFromPower(meanSquare: number): number {
  if (!(meanSquare > 1e-10)) return SILENCE_DBFS;
  return Math.min(0, 10 * Math.log10(meanSquare));
}

export function levelDbfs(samples: Float32Array): number {
  return samples.length === 0 ? SILENCE_DBFS : dbfsFromPower(sumOfSquares(samples) / samples.length);
}

/** 20 ms at 16 kHz: the frames a speech segment's loud and quiet parts are told apart by. */
const SEGMENT_FRAME = 320;
/** Of a speech segment's frames, the loudest tenth are its voice: the rest are pauses between words and padding. */
export const VOICE_QUANTILE = 0.9;

/** The mean power of each 20-ms frame of 16 kHz `samples`, quietest first. */
export function sortedFramePowers(samples: Float32Array): number[] {
  const powers: number[] = [];
  for (let from = 0; from + SEGMENT_FRAME <= samples.length; from += SEGMENT_FRAME) powers.push(sumOfSquares(samples, from, from + SEGMENT_FRAME) / SEGMENT_FRAME);
  return powers.sort((a, b) => a - b);
}

/** The value at `quantile` (0..1) of a sorted, non-empty list. */
export function quantileOf(sorted: readonly number[], quantile: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(quantile * sorted.length))]!;
}

/** The quiet frames' share of a speech segment: its noise floor (the pauses between words, and its padding). */
const FLOOR_QUANTILE = 0.1;
/** Below any real recording's floor (an RMS of 1e-5): keeps the ratio finite on digital silence. */
const SILENCE_POWER = 1e-10;

/** How a speech segment's voice stands. */
export interface SegmentVoice {
  /** The voice's level: the mean power of the loudest tenth of the 20-ms frames, in dBFS (pauses and padding do not lower it). */
  level: number;
  /**
   * How far the voice stands above the segment's own noise floor (its quietest tenth of frames),
   * in dB. Clean speech stands 30 dB or more above its pauses; speech under noise, or a crowd's
   * murmur alone, much less.
   */
  snrDb: number;
}

/** The voice of a speech segment of 16 kHz `samples`. */
export function segmentVoice(samples: Float32Array): SegmentVoice {
  const powers = sortedFramePowers(samples);
  if (powers.length === 0) return { level: SILENCE_DBFS, snrDb: Infinity };
  const at = (quantile: number) => Math.max(SILENCE_POWER, quantileOf(powers, quantile));
  return { level: dbfsFromPower(quantileOf(powers, VOICE_QUANTILE)), snrDb: 10 * Math.log10(at(VOICE_QUANTILE) / at(FLOOR_QUANTILE)) };
}

/** How far a speech segment stands above its own noise floor, in dB (SegmentVoice.snrDb). */
export const segmentSnrDb = (samples: Float32Array): number => segmentVoice(samples).snrDb;

/** The level of the voice in a speech segment, in dBFS (SegmentVoice.level). */
export const voiceLevelDbfs = (samples: Float32Array): number => segmentVoice(samples).level;

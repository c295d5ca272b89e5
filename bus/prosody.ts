// Voice prosody from sums that add up across seconds, so an interval's value is exact rather
// than an average of per-second values: the audio rows carry the sums, storage and the live
// channel add them over their intervals and finish them here.

/** Pitch on a semitone scale: 12 per octave, 0 at 100 Hz. */
export const semitones = (hz: number) => 12 * Math.log2(hz / 100);

/** Fewer voiced frames than this say nothing about how the pitch moves. */
const MIN_PITCH_FRAMES = 2;

/**
 * Standard deviation (population) of the semitones of `frames` voiced pitch frames, from their
 * sum and sum of squares; undefined under MIN_PITCH_FRAMES.
 */
export function pitchVariability(frames: number, sum: number, squares: number): number | undefined {
  if (frames < MIN_PITCH_FRAMES) return undefined;
  const mean = sum / frames;
  // Rounding can leave a hair below zero for a steady pitch.
  return Math.sqrt(Math.max(0, squares / frames - mean * mean));
}

/**
 * Share of the time from the first speech's start to the last speech's end that is not speech;
 * undefined without speech.
 */
export function pauseRatio(speechSeconds: number, firstStart: number, lastEnd: number): number | undefined {
  if (!(speechSeconds > 0)) return undefined;
  const span = lastEnd - firstStart;
  return span > 0 ? Math.min(1, Math.max(0, 1 - speechSeconds / span)) : 0;
}

/** Words per minute of speech; undefined without speech. */
export function speakingRate(words: number, speechSeconds: number): number | undefined {
  return speechSeconds > 0 ? (60 * words) / speechSeconds : undefined;
}

// How far a speech segment stands above its own noise floor, to tell clean speech from noisy
// speech: a VAD segment holds the pauses between words and its own padding, and
// those quiet frames are the noise floor.
import { quantileOf, sortedFramePowers, VOICE_QUANTILE } from '../voice/level.ts';

/** The quiet frames' share: the noise floor. */
const FLOOR_QUANTILE = 0.1;
/** Below any real recording's floor (an RMS of 1e-5): keeps the ratio finite on digital silence. */
const SILENCE_POWER = 1e-10;

/** Loud frames over quiet frames of 16 kHz `samples`, in dB (power of 20-ms frames). */
export function segmentSnrDb(samples: Float32Array): number {
  const powers = sortedFramePowers(samples);
  if (powers.length === 0) return Infinity;
  const at = (quantile: number) => Math.max(SILENCE_POWER, quantileOf(powers, quantile));
  return 10 * Math.log10(at(VOICE_QUANTILE) / at(FLOOR_QUANTILE));
}

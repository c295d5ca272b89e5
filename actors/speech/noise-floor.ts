// How far a speech segment stands above its own noise floor, to tell clean speech from noisy
// speech: a VAD segment holds the pauses between words and its own padding, and
// those quiet frames are the noise floor.
const FRAME = 320; // 20 ms at 16 kHz
/** The quiet frames' share (the noise floor) and the loud frames' share (the voice). */
const FLOOR_QUANTILE = 0.1;
const VOICE_QUANTILE = 0.9;
/** Below any real recording's floor: keeps the ratio finite on digital silence. */
const SILENCE_RMS = 1e-5;

/** Loud frames over quiet frames of 16 kHz `samples`, in dB (RMS of 20-ms frames). */
export function segmentSnrDb(samples: Float32Array): number {
  const levels: number[] = [];
  for (let from = 0; from + FRAME <= samples.length; from += FRAME) {
    let energy = 0;
    for (let i = from; i < from + FRAME; i++) energy += samples[i]! * samples[i]!;
    levels.push(Math.max(SILENCE_RMS, Math.sqrt(energy / FRAME)));
  }
  if (levels.length === 0) return Infinity;
  levels.sort((a, b) => a - b);
  const at = (quantile: number) => levels[Math.min(levels.length - 1, Math.floor(quantile * levels.length))]!;
  return 20 * Math.log10(at(VOICE_QUANTILE) / at(FLOOR_QUANTILE));
}

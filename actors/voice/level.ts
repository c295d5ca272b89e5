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

// Deterministic test signals at 16 kHz: noise, tones with harmonics, silence with a noise floor.
import { SAMPLE_RATE } from './speech.ts';

const amplitudeOf = (dbfs: number) => 10 ** (dbfs / 20);

/** White noise at roughly `dbfs` (RMS). */
export function noise(seconds: number, dbfs: number, random: () => number): Float32Array {
  const out = new Float32Array(Math.round(seconds * SAMPLE_RATE));
  const amplitude = amplitudeOf(dbfs) * Math.sqrt(3);
  for (let i = 0; i < out.length; i++) out[i] = (2 * random() - 1) * amplitude;
  return out;
}

/** A voice-like tone: fundamental gliding from `fromHz` to `toHz`, with three weaker harmonics. */
export function glide(seconds: number, fromHz: number, toHz: number, dbfs: number): Float32Array {
  const out = new Float32Array(Math.round(seconds * SAMPLE_RATE));
  const amplitude = amplitudeOf(dbfs);
  let phase = 0;
  for (let i = 0; i < out.length; i++) {
    const hz = fromHz + ((toHz - fromHz) * i) / out.length;
    phase += (2 * Math.PI * hz) / SAMPLE_RATE;
    out[i] = amplitude * (0.6 * Math.sin(phase) + 0.25 * Math.sin(2 * phase) + 0.1 * Math.sin(3 * phase) + 0.05 * Math.sin(4 * phase));
  }
  return out;
}

export function concat(parts: readonly Float32Array[]): Float32Array {
  const out = new Float32Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

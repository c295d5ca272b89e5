// Background noise for the speech-under-noise benchmark and the transcriber's tests, made from a seed so every run mixes
// the same samples: pink noise (stationary: a fan, a room, air conditioning) and synthesised
// music (non-stationary: plucked chords on a beat with a bass line, whose onsets and pitches
// overlap speech the way a stream's background music does). Both at 16 kHz, then mixed under
// speech at a signal-to-noise ratio measured on the voiced parts of the speech.
import { seededRandom } from './seeded-random.ts';
import { SAMPLE_RATE } from './voice-media.ts';

export type NoiseKind = 'pink' | 'music';

/** Pink noise (power falling 3 dB an octave): Paul Kellet's filter over seeded white noise. */
function pink(samples: number, seed: number): Float32Array {
  const random = seededRandom(seed);
  const out = new Float32Array(samples);
  let b0 = 0, b1 = 0, b2 = 0, b3 = 0, b4 = 0, b5 = 0, b6 = 0;
  for (let i = 0; i < samples; i++) {
    const white = random() * 2 - 1;
    b0 = 0.99886 * b0 + white * 0.0555179;
    b1 = 0.99332 * b1 + white * 0.0750759;
    b2 = 0.969 * b2 + white * 0.153852;
    b3 = 0.8665 * b3 + white * 0.3104856;
    b4 = 0.55 * b4 + white * 0.5329522;
    b5 = -0.7616 * b5 - white * 0.016898;
    out[i] = b0 + b1 + b2 + b3 + b4 + b5 + b6 + white * 0.5362;
    b6 = white * 0.115926;
  }
  return out;
}

// I-V-vi-IV in C, as MIDI notes, one chord a bar.
const CHORDS = [[60, 64, 67], [55, 59, 62], [57, 60, 64], [53, 57, 60]];
const BEAT_SECONDS = 0.5; // 120 beats a minute, 4 beats a bar, arpeggio in eighths

const hz = (midi: number) => 440 * 2 ** ((midi - 69) / 12);

/** Adds a plucked note: a few harmonics under a fast attack and an exponential decay. */
function pluck(out: Float32Array, at: number, midi: number, seconds: number, gain: number): void {
  const f = hz(midi);
  const start = Math.round(at * SAMPLE_RATE);
  const length = Math.min(out.length - start, Math.round(seconds * SAMPLE_RATE));
  for (let i = 0; i < length; i++) {
    const t = i / SAMPLE_RATE;
    const envelope = Math.min(1, t / 0.005) * Math.exp(-t * 4);
    let value = 0;
    for (let h = 1; h <= 4; h++) value += Math.sin(2 * Math.PI * f * h * t) / h ** 1.5;
    out[start + i]! += gain * envelope * value;
  }
}

function music(samples: number): Float32Array {
  const out = new Float32Array(samples);
  const seconds = samples / SAMPLE_RATE;
  const bar = 4 * BEAT_SECONDS;
  for (let n = 0; n * bar < seconds; n++) {
    const chord = CHORDS[n % CHORDS.length]!;
    pluck(out, n * bar, chord[0]! - 24, 2 * BEAT_SECONDS, 1); // bass on one and three
    pluck(out, n * bar + 2 * BEAT_SECONDS, chord[0]! - 24, 2 * BEAT_SECONDS, 1);
    for (let eighth = 0; eighth < 8; eighth++) pluck(out, n * bar + (eighth * BEAT_SECONDS) / 2, chord[eighth % 3]! + 12 * (eighth >> 2), BEAT_SECONDS, 0.5);
  }
  return out;
}

export function makeNoise(kind: NoiseKind, samples: number, seed = 37): Float32Array {
  return kind === 'pink' ? pink(samples, seed) : music(samples);
}

const rms = (values: Float32Array, from = 0, to = values.length) => {
  let sum = 0;
  for (let i = from; i < to; i++) sum += values[i]! * values[i]!;
  return Math.sqrt(sum / Math.max(1, to - from));
};

const FRAME = SAMPLE_RATE / 50;
/** Frames more than this far below the loudest are pauses and silence, not speech. */
const VOICED_RANGE_DB = 30;

/** The RMS of speech over its voiced 20-ms frames: pauses between words and sentences left out. */
export function voicedRms(speech: Float32Array): number {
  const frames: number[] = [];
  for (let at = 0; at + FRAME <= speech.length; at += FRAME) frames.push(rms(speech, at, at + FRAME));
  const floor = Math.max(...frames) * 10 ** (-VOICED_RANGE_DB / 20);
  const voiced = frames.filter((value) => value > floor);
  return Math.sqrt(voiced.reduce((sum, value) => sum + value * value, 0) / voiced.length);
}

/** `speech` with `noise` under it at `snrDb`, or the speech alone for `snrDb` = Infinity. */
export function mixAtSnr(speech: Float32Array, noise: Float32Array, snrDb: number): Float32Array {
  if (snrDb === Infinity) return speech;
  const gain = voicedRms(speech) / rms(noise, 0, speech.length) / 10 ** (snrDb / 20);
  const mixed = new Float32Array(speech.length);
  let peak = 0;
  for (let i = 0; i < speech.length; i++) {
    mixed[i] = speech[i]! + gain * noise[i]!;
    peak = Math.max(peak, Math.abs(mixed[i]!));
  }
  // Turned down as a whole where the sum would clip: the ratio stays, no sample is cut.
  if (peak > 0.95) for (let i = 0; i < mixed.length; i++) mixed[i]! *= 0.95 / peak;
  return mixed;
}

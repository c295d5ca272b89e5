// Fundamental frequency per frame with the McLeod pitch method (pitchy). A frame counts as voiced
// only when the periodicity is clear, the frame is loud enough to be more than room noise, and the
// frequency is one a human voice can have.
//
// A single frame is easily fooled by an octave: a strong second harmonic (or a fading
// fundamental) repeats almost as well at half the period, and the method takes the shorter
// period when the two come close. Speech pitch moves only a few semitones in a fifth of a second,
// so a reading an octave away from the recent voiced frames is suspect; it is moved back by the
// octave if the frame repeats clearly better at that octave's period, which tells the error
// from a voice that really changed octave (that one repeats no better at the octave it left).
// A reading further away still is not counted.
import { PitchDetector } from 'pitchy';
import { semitones } from '../../bus/prosody.ts';
import { dbfsFromPower } from './level.ts';
import { SAMPLE_RATE } from './pcm.ts';

// Starts just above 60 Hz so mains hum in a quiet room does not pass for a deep voice.
const VOICE_MIN_HZ = 65;
// Speaking voices seldom go higher; a reading above it is far more likely a harmonic taken for the fundamental.
export const VOICE_MAX_HZ = 500;
const MIN_CLARITY = 0.8;
const MIN_LEVEL_DBFS = -45;
/** Frames (one every half frame: 32 ms) whose voiced pitch forms the reference: about 200 ms. */
const HISTORY = 6;
const OCTAVE = 12;
/** Semitones either side of an octave that still count as an octave error; the reference lags a moving pitch. */
const OCTAVE_TOLERANCE = 2;
/**
 * How much better (in normalised autocorrelation) the frame must repeat at the reference's
 * octave. Octave errors in speech and in harmonic tones fit it better by 0.04 to 0.1; a voice
 * that changed octave fits it no better.
 */
const FOLD_MARGIN = 0.02;

export class PitchTracker {
  private readonly detector: PitchDetector<Float32Array>;
  /**
   * Semitones of the last HISTORY frames as detected, NaN where none was. Uncorrected, so that a
   * voice that really moved further than an octave, dropped at first, becomes the reference
   * once it has lasted half the history.
   */
  private readonly recent = new Float64Array(HISTORY).fill(NaN);
  private readonly voiced = new Float64Array(HISTORY);
  private next = 0;

  constructor(readonly frameLength: number) {
    this.detector = PitchDetector.forFloat32Array(frameLength);
  }

  /**
   * Frequency in Hz of a voiced frame, 0 for an unvoiced one. `meanSquare` is the frame's power.
   * Frames must come in order, one every half frame.
   */
  frequency(frame: Float32Array, meanSquare: number): number {
    const hz = this.detect(frame, meanSquare);
    const reference = this.reference();
    this.recent[this.next] = hz > 0 ? semitones(hz) : NaN;
    this.next = (this.next + 1) % HISTORY;
    const corrected = hz > 0 && !Number.isNaN(reference) ? foldOctave(frame, hz, reference) : hz;
    return corrected >= VOICE_MIN_HZ && corrected <= VOICE_MAX_HZ ? corrected : 0;
  }

  private detect(frame: Float32Array, meanSquare: number): number {
    if (dbfsFromPower(meanSquare) < MIN_LEVEL_DBFS) return 0;
    const [hz, clarity] = this.detector.findPitch(frame, SAMPLE_RATE);
    // Up to the octave above a voice, which may be its second harmonic, to be folded back.
    return clarity >= MIN_CLARITY && hz >= VOICE_MIN_HZ && hz <= 2 * VOICE_MAX_HZ ? hz : 0;
  }

  /** Median semitones of the recent frames with a pitch; NaN if none had one. */
  private reference(): number {
    let count = 0;
    for (const tone of this.recent) if (!Number.isNaN(tone)) this.voiced[count++] = tone;
    if (count === 0) return NaN;
    const sorted = this.voiced.subarray(0, count).sort();
    const middle = count >> 1;
    return count % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
  }
}

/**
 * `hz` moved by an octave towards `reference` (semitones) if it is an octave away and the frame
 * repeats clearly better at that octave; 0 if it is further than an octave away.
 */
function foldOctave(frame: Float32Array, hz: number, reference: number): number {
  const distance = Math.abs(semitones(hz) - reference);
  if (distance < OCTAVE - OCTAVE_TOLERANCE) return hz;
  if (distance > OCTAVE + OCTAVE_TOLERANCE) return 0;
  const folded = semitones(hz) > reference ? hz / 2 : hz * 2;
  return repetition(frame, SAMPLE_RATE / folded) > repetition(frame, SAMPLE_RATE / hz) + FOLD_MARGIN ? folded : hz;
}

/**
 * How well the frame repeats after `period` samples: the McLeod method's normalised
 * autocorrelation (1 for a perfect repeat), the best of the whole lags around the period.
 */
function repetition(frame: Float32Array, period: number): number {
  let best = -1;
  for (let lag = Math.round(period) - 1; lag <= Math.round(period) + 1; lag++) {
    let product = 0;
    let power = 0;
    for (let i = 0; i + lag < frame.length; i++) {
      product += frame[i]! * frame[i + lag]!;
      power += frame[i]! * frame[i]! + frame[i + lag]! * frame[i + lag]!;
    }
    if (power > 0) best = Math.max(best, (2 * product) / power);
  }
  return best;
}

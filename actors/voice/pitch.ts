// Fundamental frequency per frame with the McLeod pitch method (pitchy). A frame counts as voiced
// only when the periodicity is clear, the frame is loud enough to be more than room noise, and the
// frequency is one a human voice can have.
import { PitchDetector } from 'pitchy';
import { SAMPLE_RATE } from './pcm.ts';
import { dbfsFromPower } from './level.ts';

// Starts just above 60 Hz so mains hum in a quiet room does not pass for a deep voice.
export const VOICE_MIN_HZ = 65;
export const VOICE_MAX_HZ = 1000;
const MIN_CLARITY = 0.8;
const MIN_LEVEL_DBFS = -45;

export class PitchTracker {
  private readonly detector: PitchDetector<Float32Array>;

  constructor(readonly frameLength: number) {
    this.detector = PitchDetector.forFloat32Array(frameLength);
  }

  /** Frequency in Hz of a voiced frame, 0 for an unvoiced one. `meanSquare` is the frame's power. */
  frequency(frame: Float32Array, meanSquare: number): number {
    if (dbfsFromPower(meanSquare) < MIN_LEVEL_DBFS) return 0;
    const [hz, clarity] = this.detector.findPitch(frame, SAMPLE_RATE);
    return clarity >= MIN_CLARITY && hz >= VOICE_MIN_HZ && hz <= VOICE_MAX_HZ ? hz : 0;
  }
}

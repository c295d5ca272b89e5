// Whether a step is only the background behind the speaker, either of two kinds:
// - a crowd: under many voices the VAD hears speech everywhere, the speaker's pauses included,
//   but those pauses still fall to the crowd's level, the floor of the recent smoothed level. It
//   counts only while the background is loud against the voice (the loudest recent level stands
//   less than `loudBelowDb` above the floor);
// - another voice: one competing talker has pauses of its own, so it leaves no steady floor, but
//   while the speaker pauses the level falls well below the speaker's (the loudest recent level),
//   to the other voice's. It counts only while no crowd holds the floor.
// Either counts only while the VAD hears speech in such pauses (its mean probability there), and
// the room is not silent: in quiet the VAD alone decides, as it always has, and under steady
// noise or music, whose pauses the VAD hears as such, a weak syllable must not end a segment.
// Per stream, a few operations a 32 ms step: the floor and the peak are the extremes of
// half-second blocks, kept for a few seconds.
import { dbfsFromPower } from './level.ts';

export interface BackgroundLevelOptions {
  /** Steps whose mean power is the level compared: long enough to bridge the gaps between words. */
  smoothingSteps: number;
  /** Steps per block whose quietest and loudest smoothed level are kept. */
  blockSteps: number;
  /** Blocks the floor is the quietest of: a few seconds, to include a pause of the speaker's. */
  floorBlocks: number;
  /** Blocks the peak is the loudest of: long enough to include the speaker's voice. */
  peakBlocks: number;
  /** The background counts only while the peak stands less than this above the floor (dB). */
  loudBelowDb: number;
  /** Neither kind counts while the floor is under this (dBFS): silence, or a room too quiet to hold a crowd. */
  audibleAboveDbfs: number;
  /** A step whose level is within this of the floor is the crowd's (dB). */
  marginDb: number;
  /** A step this far below the peak is another voice's, while no crowd holds the floor (dB). */
  belowVoiceDb: number;
  /**
   * Steps in a row at the floor or below the voice that make a pause, where the VAD's probability
   * is learnt: not the dips between words, where it hears the speaker's weak sounds under steady noise.
   */
  pauseSteps: number;
  /** Weight of each pause step in the mean probability the VAD hears speech there. */
  heardRate: number;
  /** The background counts only while that mean is at least this. */
  heardAbove: number;
}

export const DEFAULT_BACKGROUND_LEVEL: BackgroundLevelOptions = {
  smoothingSteps: 8,
  blockSteps: 16,
  floorBlocks: 6,
  peakBlocks: 12,
  loudBelowDb: 25,
  audibleAboveDbfs: -70,
  marginDb: 3,
  belowVoiceDb: 14,
  pauseSteps: 4,
  heardRate: 1 / 64,
  heardAbove: 0.5,
};

export class BackgroundLevel {
  private readonly powers: Float64Array;
  private powerCount = 0;
  private readonly floors: Float64Array;
  private readonly peaks: Float64Array;
  private blocks = 0;
  private blockStep = 0;
  private blockFloor = Infinity;
  private blockPeak = -Infinity;
  /** Starts as if no crowd were heard: until one is, a stream is cut as the VAD alone cuts it. */
  private heard = 0;
  /** Steps in a row at the floor or below the voice, up to this one. */
  private pausedFor = 0;
  /** The floor at the last step (dBFS). */
  private floor = -Infinity;

  constructor(private readonly options: BackgroundLevelOptions) {
    this.powers = new Float64Array(options.smoothingSteps);
    this.floors = new Float64Array(options.floorBlocks);
    this.peaks = new Float64Array(options.peakBlocks);
  }

  /** Takes the next step's mean power (mean of squared samples) and speech probability; whether it is only the background. */
  step(meanSquare: number, probability: number): boolean {
    const { smoothingSteps, blockSteps, loudBelowDb, marginDb, belowVoiceDb, pauseSteps, heardRate } = this.options;
    this.powers[this.powerCount++ % smoothingSteps] = meanSquare;
    let sum = 0;
    for (const power of this.powers) sum += power;
    const level = dbfsFromPower(sum / Math.min(this.powerCount, smoothingSteps));
    this.blockFloor = Math.min(this.blockFloor, level);
    this.blockPeak = Math.max(this.blockPeak, level);
    if (++this.blockStep === blockSteps) this.closeBlock();
    const floor = Math.min(this.blockFloor, extreme(this.floors, this.blocks, Math.min, Infinity));
    this.floor = floor;
    const peak = Math.max(this.blockPeak, extreme(this.peaks, this.blocks, Math.max, -Infinity));
    const atFloor = level < floor + marginDb;
    const belowVoice = level < peak - belowVoiceDb;
    this.pausedFor = atFloor || belowVoice ? this.pausedFor + 1 : 0;
    if (this.pausedFor >= pauseSteps) this.heard += heardRate * (probability - this.heard);
    const crowd = peak - floor < loudBelowDb;
    const background = crowd ? atFloor : belowVoice;
    return background && this.talks;
  }

  /** Whether the background is voices: the VAD hears speech in the speaker's pauses, and the room is not silent. */
  get talks(): boolean {
    return this.floor > this.options.audibleAboveDbfs && this.heard >= this.options.heardAbove;
  }

  private closeBlock(): void {
    this.floors[this.blocks % this.floors.length] = this.blockFloor;
    this.peaks[this.blocks % this.peaks.length] = this.blockPeak;
    this.blocks++;
    this.blockStep = 0;
    this.blockFloor = Infinity;
    this.blockPeak = -Infinity;
  }
}

/** The extreme of the first `count` values of a ring (all of it once full). */
function extreme(ring: Float64Array, count: number, pick: (a: number, b: number) => number, none: number): number {
  let result = none;
  for (let i = 0; i < Math.min(count, ring.length); i++) result = pick(result, ring[i]!);
  return result;
}

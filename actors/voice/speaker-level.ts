// Whether a finished segment is the speaker's or only the room's. While the speaker is silent
// the background talks on: a crowd, or another person, whom the VAD hears as speech and the
// transcriber writes down as words the speaker never said. The speaker is the loudest voice at
// the microphone (that is what an SNR above 0 dB means), so a segment whose voice stands well
// under the loudest segment of the last minute is the background's, and is not transcribed.
// Only while the background is known to talk (BackgroundLevel.talks): in a quiet room, or
// under steady noise, a soft speaker or a second participant is still written down. A minute
// without a louder segment forgets the speaker, so that a new, quieter one is heard again.
// Pure: levels and seconds in, a decision out.
import { dbfsFromPower, quantileOf, SILENCE_DBFS, sortedFramePowers, VOICE_QUANTILE } from './level.ts';

export interface SpeakerLevelOptions {
  /** A segment this far under the loudest kept segment of the memory is the background's (dB). */
  quieterByDb: number;
  /** Seconds a kept segment is remembered. */
  memorySeconds: number;
}

export const DEFAULT_SPEAKER_LEVEL: SpeakerLevelOptions = {
  quieterByDb: 8,
  memorySeconds: 60,
};

/** The level of the voice in 16 kHz `samples`: the mean power of its loudest tenth of 20-ms frames, in dBFS. */
export function voiceLevelDbfs(samples: Float32Array): number {
  const powers = sortedFramePowers(samples);
  return powers.length === 0 ? SILENCE_DBFS : dbfsFromPower(quantileOf(powers, VOICE_QUANTILE));
}

export class SpeakerLevel {
  /** Kept segments' levels and ends (seconds), oldest first. */
  private readonly kept: { level: number; at: number }[] = [];

  constructor(private readonly options: SpeakerLevelOptions) {}

  /**
   * Whether the segment ending at `at` seconds, whose voice is at `level` dBFS, is the speaker's;
   * `backgroundTalks`: the background is voices (a crowd, or another person).
   */
  keeps(level: number, at: number, backgroundTalks: boolean): boolean {
    const { quieterByDb, memorySeconds } = this.options;
    while (this.kept.length > 0 && this.kept[0]!.at < at - memorySeconds) this.kept.shift();
    const loudest = this.kept.reduce((max, segment) => Math.max(max, segment.level), -Infinity);
    if (backgroundTalks && level < loudest - quieterByDb) return false;
    this.kept.push({ level, at });
    return true;
  }
}

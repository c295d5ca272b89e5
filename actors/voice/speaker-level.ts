// Whether a finished segment is the speaker's or only the room's. While the speaker is silent
// the background talks on: a crowd, or another person, whom the VAD hears as speech and the
// transcriber writes down as words the speaker never said. The speaker is the loudest voice at
// the microphone (that is what an SNR above 0 dB means), so a segment whose voice stands well
// under the loudest segment of the last minute is the background's, and is not transcribed.
// Before a speaker is heard (at the start, or a minute after the last), there is no level to
// compare with, but the room alone has no pauses: a crowd's murmur stands only a few dB above
// its own quietest frames, a voice over it stands out by more. So a segment is taken for the
// speaker's only once it stands out of its own floor. Under a loud crowd (5 dB under the
// speaker) the room alone is only 5-7 dB under the speaker, inside the first margin: a segment
// both flat (not standing out of its floor) and a few dB under the speaker is then the room's.
// The speaker's own flat segments under such a crowd stood within 2 dB of the loudest
// (ops/bench/README-speech-crowd.md, "A loud crowd once the speaker is heard").
// Only while the background is known to talk (BackgroundLevel.talks): in a quiet room, or
// under steady noise, a soft speaker or a second participant is still written down. A minute
// without a louder segment forgets the speaker, so that a new, quieter one is heard again.
// Pure: levels and seconds in, a decision out.
import type { SegmentVoice } from './level.ts';

export interface SpeakerLevelOptions {
  /** A segment this far under the loudest kept segment of the memory is the background's (dB). */
  quieterByDb: number;
  /** Seconds a kept segment is remembered. */
  memorySeconds: number;
  /** A segment standing less than this above its own floor (its SNR estimate) does not stand out (dB): while no speaker is remembered it is the background's. */
  standsOutByDb: number;
  /** A segment that does not stand out and is this far under the loudest kept segment is the background's (dB). */
  flatQuieterByDb: number;
}

export const DEFAULT_SPEAKER_LEVEL: SpeakerLevelOptions = {
  quieterByDb: 8,
  memorySeconds: 60,
  standsOutByDb: 10,
  flatQuieterByDb: 3,
};

export class SpeakerLevel {
  /** Kept segments' levels and ends (seconds), oldest first. */
  private readonly kept: { level: number; at: number }[] = [];

  constructor(private readonly options: SpeakerLevelOptions) {}

  /**
   * Whether the segment ending at `at` seconds is the speaker's; `backgroundTalks`: the
   * background is voices (a crowd, or another person).
   */
  keeps({ level, snrDb }: SegmentVoice, at: number, backgroundTalks: boolean): boolean {
    const { quieterByDb, memorySeconds, standsOutByDb, flatQuieterByDb } = this.options;
    while (this.kept.length > 0 && this.kept[0]!.at < at - memorySeconds) this.kept.shift();
    if (backgroundTalks) {
      const flat = snrDb < standsOutByDb;
      const under = this.loudest() - level;
      const room = this.kept.length === 0 ? flat : under > quieterByDb || (flat && under > flatQuieterByDb);
      if (room) return false;
    }
    this.kept.push({ level, at });
    return true;
  }

  private loudest(): number {
    return this.kept.reduce((max, segment) => Math.max(max, segment.level), -Infinity);
  }
}

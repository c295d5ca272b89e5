// Whether the host is keeping up with the sessions it runs, from what their workers report:
// face frames analysed and dropped, audio shed, speech dropped or waiting long for transcription.
// A host that is behind takes no new session, even below HOST_CAPACITY, so that a busy machine
// answers 503 (or leaves a new session to another host) before its sessions degrade further.

/** Over the last WINDOW_MS: more than this share of frames dropped means the host is behind. */
const MAX_DROPPED_SHARE = 0.05;
/** Fewer frames than this in the window say nothing either way. */
const MIN_FRAMES = 40;
/**
 * A speech segment that waited longer than this for the transcription thread means the host is
 * behind: one thread transcribes every session's speech in turn, so the wait grows with the number
 * of talking sessions well before segments are dropped (the capacity benchmark: speech rows
 * p50 2 s late at 4 sessions, 11 s at 8, none dropped).
 */
const MAX_SPEECH_WAIT_SECONDS = 5;
const WINDOW_MS = 10_000;
const SLOT_MS = 1000;

interface Slot {
  at: number;
  analysed: number;
  dropped: number;
  audioShed: number;
  speechDropped: number;
  longestSpeechWait: number;
}

export class HostLoad {
  private readonly slots: Slot[] = [];

  constructor(private readonly now: () => number = Date.now) {}

  videoSecond(analysed: number, dropped: number): void {
    const slot = this.current();
    slot.analysed += analysed;
    slot.dropped += dropped;
  }

  audioShed(seconds: number): void {
    this.current().audioShed += seconds;
  }

  speechDropped(): void {
    this.current().speechDropped++;
  }

  speechWaited(seconds: number): void {
    const slot = this.current();
    slot.longestSpeechWait = Math.max(slot.longestSpeechWait, seconds);
  }

  /** Why the host is behind, or undefined while it keeps up. */
  behind(): string | undefined {
    this.expire();
    let analysed = 0;
    let dropped = 0;
    let audioShed = 0;
    let speechDropped = 0;
    let longestSpeechWait = 0;
    for (const slot of this.slots) {
      analysed += slot.analysed;
      dropped += slot.dropped;
      audioShed += slot.audioShed;
      speechDropped += slot.speechDropped;
      longestSpeechWait = Math.max(longestSpeechWait, slot.longestSpeechWait);
    }
    const window = `in the last ${WINDOW_MS / 1000} s`;
    if (audioShed > 0) return `${audioShed.toFixed(1)} s of audio shed ${window}`;
    if (speechDropped > 0) return `${speechDropped} speech segments dropped untranscribed ${window}`;
    if (longestSpeechWait > MAX_SPEECH_WAIT_SECONDS) {
      return `speech waited ${longestSpeechWait.toFixed(1)} s for transcription ${window}`;
    }
    const frames = analysed + dropped;
    if (frames >= MIN_FRAMES && dropped / frames > MAX_DROPPED_SHARE) {
      return `${((100 * dropped) / frames).toFixed(1)} % of face frames dropped ${window}`;
    }
    return undefined;
  }

  private current(): Slot {
    const at = Math.floor(this.now() / SLOT_MS) * SLOT_MS;
    const last = this.slots[this.slots.length - 1];
    if (last?.at === at) return last;
    const slot = { at, analysed: 0, dropped: 0, audioShed: 0, speechDropped: 0, longestSpeechWait: 0 };
    this.slots.push(slot);
    this.expire();
    return slot;
  }

  private expire(): void {
    const oldest = this.now() - WINDOW_MS;
    while (this.slots.length && this.slots[0]!.at + SLOT_MS <= oldest) this.slots.shift();
  }
}

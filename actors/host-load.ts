// Whether the host is keeping up with the sessions it runs, from what their workers report:
// face frames analysed and dropped, audio shed, speech dropped or waiting long for transcription.
// A host that is behind takes no new session, even below HOST_CAPACITY, so that a busy machine
// answers 503 (or leaves a new session to another host) before its sessions degrade further.

/**
 * Over the last WINDOW_MS, the host is behind past these: more than this share of face frames
 * dropped, or a speech segment that waited longer than this for a transcription thread (the
 * wait grows with the number of talking sessions well before segments are dropped: the capacity
 * benchmark had speech rows p50 2 s late at 4 sessions, 11 s at 8, none dropped).
 */
const BEHIND = { droppedShare: 0.05, speechWaitSeconds: 5 };
/**
 * A host that is behind keeps up again only within these: 1 % of frames dropped, as the capacity
 * bounds allow, and speech waiting at most 2 s. Without the gap a host hovering at the edge flips
 * back every few seconds and takes new sessions each time (the capacity benchmark with
 * `--admission host`: 8 sessions dropping 5-10 % of frames took two more).
 */
const KEEPS_UP = { droppedShare: 0.01, speechWaitSeconds: 2 };
/**
 * ...and stays within them this long before it takes sessions again: a host past its capacity
 * drops frames in bursts (when transcription takes the cores), which one window can miss.
 */
const KEEP_UP_FOR_MS = 20_000;
/** Fewer frames than this in the window say nothing either way. */
const MIN_FRAMES = 40;
/** How far back the host looks; a session is judged only after about this much analysis. */
export const WINDOW_MS = 10_000;
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
  private wasBehind = false;
  /** Since when a host that was behind has been back within KEEPS_UP. */
  private withinSince: number | undefined;

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
    const limits = this.wasBehind ? KEEPS_UP : BEHIND;
    const frames = analysed + dropped;
    const window = `in the last ${WINDOW_MS / 1000} s`;
    let reason: string | undefined;
    if (audioShed > 0) reason = `${audioShed.toFixed(1)} s of audio shed ${window}`;
    else if (speechDropped > 0) reason = `${speechDropped} speech segments dropped untranscribed ${window}`;
    else if (longestSpeechWait > limits.speechWaitSeconds) {
      reason = `speech waited ${longestSpeechWait.toFixed(1)} s for transcription ${window}`;
    } else if (frames >= MIN_FRAMES && dropped / frames > limits.droppedShare) {
      reason = `${((100 * dropped) / frames).toFixed(1)} % of face frames dropped ${window}`;
    }
    if (reason || !this.wasBehind) {
      this.withinSince = undefined;
      this.wasBehind = reason !== undefined;
      return reason;
    }
    this.withinSince ??= this.now();
    const within = this.now() - this.withinSince;
    if (within < KEEP_UP_FOR_MS) {
      return `within the bounds for ${Math.floor(within / 1000)} s of the ${KEEP_UP_FOR_MS / 1000} s needed after being behind`;
    }
    this.withinSince = undefined;
    this.wasBehind = false;
    return undefined;
  }

  /** At the soonest, how long until a host that is behind keeps up again (0 while it keeps up). */
  keepsUpInMs(): number {
    if (!this.wasBehind) return 0;
    return KEEP_UP_FOR_MS - (this.withinSince === undefined ? 0 : this.now() - this.withinSince);
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

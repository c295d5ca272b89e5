// Whether the host is keeping up with the sessions it runs, from what their workers report:
// face frames analysed and dropped, audio shed. A host that is shedding work takes no new
// session, even below HOST_CAPACITY, so that a busy machine answers 503 (or leaves a new
// session to another host) before its sessions degrade further.

/** Over the last WINDOW_MS: more than this share of frames dropped means the host is behind. */
const MAX_DROPPED_SHARE = 0.05;
/** Fewer frames than this in the window say nothing either way. */
const MIN_FRAMES = 40;
const WINDOW_MS = 10_000;
const SLOT_MS = 1000;

interface Slot {
  at: number;
  analysed: number;
  dropped: number;
  audioShed: number;
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

  /** Why the host is behind, or undefined while it keeps up. */
  behind(): string | undefined {
    this.expire();
    let analysed = 0;
    let dropped = 0;
    let audioShed = 0;
    for (const slot of this.slots) {
      analysed += slot.analysed;
      dropped += slot.dropped;
      audioShed += slot.audioShed;
    }
    if (audioShed > 0) return `${audioShed.toFixed(1)} s of audio shed in the last ${WINDOW_MS / 1000} s`;
    const frames = analysed + dropped;
    if (frames >= MIN_FRAMES && dropped / frames > MAX_DROPPED_SHARE) {
      return `${((100 * dropped) / frames).toFixed(1)} % of face frames dropped in the last ${WINDOW_MS / 1000} s`;
    }
    return undefined;
  }

  private current(): Slot {
    const at = Math.floor(this.now() / SLOT_MS) * SLOT_MS;
    const last = this.slots[this.slots.length - 1];
    if (last?.at === at) return last;
    const slot = { at, analysed: 0, dropped: 0, audioShed: 0 };
    this.slots.push(slot);
    this.expire();
    return slot;
  }

  private expire(): void {
    const oldest = this.now() - WINDOW_MS;
    while (this.slots.length && this.slots[0]!.at + SLOT_MS <= oldest) this.slots.shift();
  }
}

// Whether the host's shared analysis threads keep up with the sessions it runs. A host that is
// behind takes no new session, even below HOST_CAPACITY and with cores to spare by measure, so
// that a full machine answers 503 (or leaves a new session to another host) before its sessions
// degrade further.
//
// Only what is the host's, not one session's, can make it behind: one stream shedding its own
// audio, dropping its own speech or costing more than its budget is that session's matter (its
// own effort is lowered, host.ts), and a session still warming up (not yet measured for a whole
// window) is covered by its reservation (host-room.ts). So the signals are:
// - the face thread saturated: dropping frames with every stream already at its lowest effort
//   (the thread lowers the most expensive streams first, down to what their faces need), for
//   long enough that it is not the start-up of sessions warming together;
// - the voice thread shedding audio, or the transcription threads dropping speech or keeping a
//   segment waiting long, for at least two measured sessions at once: a shared thread behind
//   shows in every stream it serves, one stream's own excess in that stream alone.

/**
 * Past these the host is behind: the face thread saturated this long, or speech that waited
 * this long for transcription (the wait grows with the number of talking sessions well before
 * segments are dropped: the capacity benchmark had speech rows p50 2 s late at 4 sessions, 11 s
 * at 8, none dropped).
 */
const BEHIND = { faceSaturatedMs: 5000, speechWaitSeconds: 5 };
/**
 * A host that is behind keeps up again only within these: the face thread not saturated at
 * all, and speech waiting at most 2 s. Without the gap a host hovering at the edge flips back
 * every few seconds and takes new sessions each time.
 */
const KEEPS_UP = { faceSaturatedMs: 0, speechWaitSeconds: 2 };
/**
 * ...and stays within them this long before it takes sessions again: a host past its capacity
 * drops work in bursts (when transcription takes the cores), which one window can miss.
 */
const KEEP_UP_FOR_MS = 20_000;
/** Sessions whose shared thread must show it before the thread counts as behind. */
const SESSIONS_FOR_A_SHARED_THREAD = 2;
/** How far back the host looks; a session is judged only after about this much analysis. */
export const WINDOW_MS = 10_000;

type SessionSignal = 'audio' | 'speech dropped' | 'speech waited';

interface Signal {
  at: number;
  session: string;
  kind: SessionSignal;
  /** Seconds shed or waited; 1 for a dropped segment. */
  amount: number;
}

export class HostLoad {
  private signals: Signal[] = [];
  private faceSaturatedSince: number | undefined;
  private faceSaturation = '';
  private wasBehind = false;
  /** Since when a host that was behind has been back within KEEPS_UP. */
  private withinSince: number | undefined;

  constructor(private readonly now: () => number = Date.now) {}

  /** The face thread says whether it drops frames with every stream at its floor. */
  faceSaturated(saturated: boolean, detail = ''): void {
    if (!saturated) this.faceSaturatedSince = undefined;
    else this.faceSaturatedSince ??= this.now();
    this.faceSaturation = detail;
  }

  audioShed(session: string, seconds: number): void {
    this.note(session, 'audio', seconds);
  }

  speechDropped(session: string): void {
    this.note(session, 'speech dropped', 1);
  }

  speechWaited(session: string, seconds: number): void {
    this.note(session, 'speech waited', seconds);
  }

  /**
   * Why the host is behind, or undefined while it keeps up. `measured`: whether a session has
   * been measured for a whole window; the signals of one still warming up do not count.
   */
  behind(measured: (session: string) => boolean): string | undefined {
    this.expire();
    const limits = this.wasBehind ? KEEPS_UP : BEHIND;
    const window = `in the last ${WINDOW_MS / 1000} s`;
    const saturatedMs = this.faceSaturatedSince === undefined ? -1 : this.now() - this.faceSaturatedSince;
    const sessionsWith = (kind: SessionSignal, over = 0) =>
      new Set(this.signals.filter((s) => s.kind === kind && s.amount > over && measured(s.session)).map((s) => s.session)).size;
    const shedding = sessionsWith('audio');
    const dropping = sessionsWith('speech dropped');
    const waiting = sessionsWith('speech waited', limits.speechWaitSeconds);
    let reason: string | undefined;
    if (saturatedMs >= limits.faceSaturatedMs) {
      reason = `face analysis saturated for ${Math.floor(saturatedMs / 1000)} s with every stream at its lowest effort${this.faceSaturation ? ` (${this.faceSaturation})` : ''}`;
    } else if (shedding >= SESSIONS_FOR_A_SHARED_THREAD) reason = `${shedding} sessions shed audio ${window}`;
    else if (dropping >= SESSIONS_FOR_A_SHARED_THREAD) reason = `${dropping} sessions dropped speech untranscribed ${window}`;
    else if (waiting >= SESSIONS_FOR_A_SHARED_THREAD) {
      reason = `speech of ${waiting} sessions waited over ${limits.speechWaitSeconds} s for transcription ${window}`;
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

  private note(session: string, kind: SessionSignal, amount: number): void {
    this.signals.push({ at: this.now(), session, kind, amount });
    this.expire();
  }

  private expire(): void {
    const oldest = this.now() - WINDOW_MS;
    if (this.signals.length > 0 && this.signals[0]!.at <= oldest) this.signals = this.signals.filter((s) => s.at > oldest);
  }
}

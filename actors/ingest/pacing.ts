// Keeps a pull at real time: fed the media clock (seconds of media delivered since the first
// byte) and the wall clock, it says when to hold reading ffmpeg's pipes, when to go on, and when
// a stream has stayed faster than real time for too long. Pure: no timers, no I/O.

export interface PacingLimits {
  /** How far the media may run ahead of the wall clock before reading is held. */
  leadSeconds: number;
  /** The lead allowed grows by this share of the time since the first media. */
  driftShare: number;
  /** A hold ends once the lead is this much below `leadSeconds`, so holds come about once a second, not once a chunk. */
  resumeGapSeconds: number;
  /** The sliding window over which holding is measured. */
  windowSeconds: number;
  /** Holding for more than this share of the window means the stream stays too fast. */
  heldShare: number;
}

export const PACING_LIMITS: PacingLimits = {
  // A server's start-up burst (GOP cache, catch-up after a reconnect) delivers up to about 10 s
  // of buffered media at once, and the live stream then follows it at real time. Holding such a
  // stream below its burst would keep the rest of the burst waiting in the socket for the whole
  // session: it would always have data ready, as a file pushed at wire speed does, and nothing
  // could tell the two apart. 12 s lets that burst through with 2 s of network jitter to spare;
  // the worst a stream can cost beyond real time is 12 s of decoding, once per connection.
  leadSeconds: 12,
  // An encoder's clock may run a little fast against ours (crystals are off by tens of parts
  // per million, some audio clocks by a tenth of a percent). Over a 12-hour session even 0.1 %
  // adds 43 s, past any fixed lead: the stream would have media waiting from then on, as a
  // file pushed at wire speed does, and be stopped. 0.5 % (3 min in 12 h) covers such clocks
  // and lets a stream pushed faster cost at most that share more decoding.
  driftShare: 0.005,
  resumeGapSeconds: 1,
  // A stream held for more than half of a minute delivers over twice real time on average: no
  // live encoder does that, while one burst of 12 s is held for well under 30 s. A file pushed at
  // wire speed is held nearly all the time, and stopped about 30 s after its lead is reached.
  windowSeconds: 60,
  heldShare: 0.5,
};

/** The reason a pull ends with when the stream stays faster than real time. */
export const STREAM_TOO_FAST = 'stream delivered faster than real time';

export interface PacingDecision {
  /** Hold reading: the media is too far ahead. */
  hold: boolean;
  /** While holding: the wall time (ms) the lead falls back enough to read again. */
  resumeAt?: number;
  /** Held for more than the allowed share of the window: the stream stays faster than real time. */
  tooFast: boolean;
}

interface Hold {
  from: number;
  to: number;
}

export class MediaPacing {
  private origin: number | undefined;
  private holdingSince: number | undefined;
  // Holds that ended within the window, oldest first.
  private readonly holds: Hold[] = [];

  constructor(private readonly limits: PacingLimits = PACING_LIMITS) {}

  get holding(): boolean {
    return this.holdingSince !== undefined;
  }

  /** Seconds the media is ahead of the wall clock, both counted from the first update. */
  lead(mediaSeconds: number, now: number): number {
    this.origin ??= now;
    return mediaSeconds - (now - this.origin) / 1000;
  }

  /** How far ahead the media may be before reading is held. */
  allowedLead(now: number): number {
    this.origin ??= now;
    return this.limits.leadSeconds + (this.limits.driftShare * (now - this.origin)) / 1000;
  }

  /** Called as media arrives and when a hold's time is up. */
  update(mediaSeconds: number, now: number): PacingDecision {
    const { resumeGapSeconds, driftShare } = this.limits;
    const lead = this.lead(mediaSeconds, now);
    const allowed = this.allowedLead(now);
    if (this.holdingSince === undefined && lead > allowed) this.holdingSince = now;
    else if (this.holdingSince !== undefined && lead <= allowed - resumeGapSeconds) {
      this.holds.push({ from: this.holdingSince, to: now });
      this.holdingSince = undefined;
    }
    const tooFast = this.heldSeconds(now) > this.limits.windowSeconds * this.limits.heldShare;
    if (this.holdingSince === undefined) return { hold: false, tooFast };
    // When lead = allowed - gap: media - w = leadSeconds + driftShare * w - gap, w the wall seconds.
    const origin = this.origin as number;
    const resumeAt = Math.ceil(origin + ((mediaSeconds - this.limits.leadSeconds + resumeGapSeconds) / (1 + driftShare)) * 1000);
    return { hold: true, resumeAt, tooFast };
  }

  /** Seconds held within the window that ends now. */
  heldSeconds(now: number): number {
    const start = now - this.limits.windowSeconds * 1000;
    while (this.holds.length > 0 && (this.holds[0] as Hold).to <= start) this.holds.shift();
    let held = 0;
    for (const { from, to } of this.holds) held += to - Math.max(from, start);
    if (this.holdingSince !== undefined) held += now - Math.max(this.holdingSince, start);
    return held / 1000;
  }
}

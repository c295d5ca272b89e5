// How much work the face thread puts into each frame. At full effort it analyses frames as
// configured; when it cannot keep up (it is dropping frames) it first does less per frame:
// detection on a smaller picture and the expression classifier's answer held for a frame
// (FACE_REDUCED_*), about a third less CPU with four faces. Frames are dropped only when that is
// not enough. It goes back to full effort once reduced effort has kept up, with the thread idle
// at least half the time, for long enough that full effort is likely to keep up as well.

export interface Effort {
  /** YuNet reads frames scaled down to at most this width; 0: at their own size. */
  detectionWidth: number;
  /** Per track, the classifier runs on every this many frames (ClassifyCadence). */
  classifyEvery: number;
}

/** Full effort steps down past this share of frames dropped within WINDOW_MS: the capacity bound. */
const REDUCE_PAST_DROPPED = 0.01;
const WINDOW_MS = 5000;
/**
 * Reduced effort steps up after this long without a frame dropped and with the thread busy at
 * most FULL_FITS_BELOW of the time: full effort costs up to 1.6 times as much, so it should
 * still leave the thread some idle time.
 */
const STAY_REDUCED_MS = 20_000;
const FULL_FITS_BELOW = 0.5;

interface Second {
  at: number;
  offered: number;
  dropped: number;
}

export class FaceEffort {
  private readonly reducedEffort: Effort;
  private reducedNow = false;
  private readonly seconds: Second[] = [];
  /** While reduced: since when no frame was dropped and the thread was idle enough. */
  private calmSince: number | undefined;
  private lastReview: number | undefined;

  constructor(
    private readonly full: Effort,
    /** What the thread falls back to, where it is lighter than `full`; no lighter: it never changes. */
    reduced: Effort,
    private readonly now: () => number = () => performance.now(),
  ) {
    const widths = [full.detectionWidth, reduced.detectionWidth].filter((width) => width > 0);
    this.reducedEffort = {
      detectionWidth: widths.length > 0 ? Math.min(...widths) : 0,
      classifyEvery: Math.max(full.classifyEvery, reduced.classifyEvery),
    };
  }

  get current(): Effort {
    return this.reducedNow ? this.reducedEffort : this.full;
  }

  get reduced(): boolean {
    return this.reducedNow;
  }

  /** A frame was offered; `dropped`: it replaced one that was waiting, which is lost. */
  offered(dropped: boolean): void {
    const at = this.now();
    let second = this.seconds.at(-1);
    if (!second || at - second.at >= 1000) this.seconds.push((second = { at, offered: 0, dropped: 0 }));
    second.offered++;
    if (dropped) {
      second.dropped++;
      this.calmSince = undefined;
    }
  }

  /**
   * Called about once a second with the share of the last second the thread was busy (its event
   * loop utilisation). Returns true when the effort changed.
   */
  review(busyShare: number): boolean {
    const at = this.now();
    const since = this.lastReview ?? at;
    this.lastReview = at;
    while (this.seconds.length > 0 && at - this.seconds[0]!.at > WINDOW_MS) this.seconds.shift();
    if (sameEffort(this.full, this.reducedEffort)) return false;
    if (!this.reducedNow) {
      let offered = 0;
      let dropped = 0;
      for (const second of this.seconds) {
        offered += second.offered;
        dropped += second.dropped;
      }
      if (dropped === 0 || dropped <= REDUCE_PAST_DROPPED * offered) return false;
      this.reducedNow = true;
      this.calmSince = undefined;
      return true;
    }
    if (busyShare > FULL_FITS_BELOW) {
      this.calmSince = undefined;
      return false;
    }
    this.calmSince ??= since;
    if (at - this.calmSince < STAY_REDUCED_MS) return false;
    this.reducedNow = false;
    this.seconds.length = 0;
    return true;
  }
}

function sameEffort(a: Effort, b: Effort): boolean {
  return a.detectionWidth === b.detectionWidth && a.classifyEvery === b.classifyEvery;
}

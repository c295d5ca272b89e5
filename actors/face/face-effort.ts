// How much work the face thread puts into each frame. At full effort it analyses frames as
// configured; when it cannot keep up (it is dropping frames) it first does less per frame, in
// steps: detection on a smaller picture and the expression classifier's answer held for a frame
// (FACE_REDUCED_*, about a third less CPU with four faces), then detection on a smaller picture
// still (FACE_LEAST_*). Frames are dropped only when the last step is not enough. It goes back up
// a step once the lighter one has kept up, with the thread idle at least half the time, for long
// enough that the heavier one is likely to keep up as well.

export interface Effort {
  /** YuNet reads frames scaled down to at most this width; 0: at their own size. */
  detectionWidth: number;
  /** Per track, the classifier runs on every this many frames (ClassifyCadence). */
  classifyEvery: number;
}

/**
 * A step goes down past this share of frames dropped within WINDOW_MS: the capacity bound. A
 * step it went to is judged once it has run that long, on its own frames: right after a change
 * the frames already waiting still carry the load of the step before.
 */
const STEP_DOWN_PAST_DROPPED = 0.01;
const WINDOW_MS = 5000;
/**
 * A lighter step goes back up after `calmMs` (FACE_EFFORT_CALM_SECONDS) without a frame dropped
 * and with the thread busy at most this share of the time: each step up costs up to 1.6 times as
 * much, so it should still leave the thread some idle time.
 */
const HEAVIER_FITS_BELOW = 0.5;

interface Second {
  at: number;
  offered: number;
  dropped: number;
}

export class FaceEffort {
  /** Full effort first, each next one lighter than the one before. */
  private readonly levels: Effort[];
  private levelNow = 0;
  private readonly seconds: Second[] = [];
  /** Below full: since when no frame was dropped and the thread was idle enough. */
  private calmSince: number | undefined;
  private lastReview: number | undefined;
  private changedAt: number | undefined;

  constructor(
    full: Effort,
    /** What the thread steps down to, in order; a step no lighter than the one before is skipped. */
    steps: readonly Effort[],
    /** How long a lighter step must stay calm before the thread steps back up. */
    private readonly calmMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.levels = [full];
    for (const step of steps) {
      const lighter = lighterOf(this.levels.at(-1)!, step);
      if (!sameEffort(lighter, this.levels.at(-1)!)) this.levels.push(lighter);
    }
  }

  get current(): Effort {
    return this.levels[this.levelNow]!;
  }

  /** Steps below full effort: 0 is full. */
  get level(): number {
    return this.levelNow;
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
    const judged = this.changedAt === undefined || at - this.changedAt >= WINDOW_MS;
    if (judged && this.levelNow < this.levels.length - 1 && this.droppedShare() > STEP_DOWN_PAST_DROPPED) {
      return this.step(1, at);
    }
    if (this.levelNow === 0) return false;
    if (busyShare > HEAVIER_FITS_BELOW) {
      this.calmSince = undefined;
      return false;
    }
    this.calmSince ??= since;
    if (at - this.calmSince < this.calmMs) return false;
    return this.step(-1, at);
  }

  private droppedShare(): number {
    let offered = 0;
    let dropped = 0;
    for (const second of this.seconds) {
      offered += second.offered;
      dropped += second.dropped;
    }
    return offered === 0 ? 0 : dropped / offered;
  }

  /** Each step is judged on its own: the drops and calm of the one before are forgotten. */
  private step(by: 1 | -1, at: number): true {
    this.levelNow += by;
    this.changedAt = at;
    this.seconds.length = 0;
    this.calmSince = undefined;
    return true;
  }
}

/** `step` where it asks for less than `than`, `than` where it does not. */
function lighterOf(than: Effort, step: Effort): Effort {
  const widths = [than.detectionWidth, step.detectionWidth].filter((width) => width > 0);
  return {
    detectionWidth: widths.length > 0 ? Math.min(...widths) : 0,
    classifyEvery: Math.max(than.classifyEvery, step.classifyEvery),
  };
}

function sameEffort(a: Effort, b: Effort): boolean {
  return a.detectionWidth === b.detectionWidth && a.classifyEvery === b.classifyEvery;
}

// How much work the face thread puts into each frame. At full effort it analyses every face of
// every frame at the frame's size; when it cannot keep up (it is dropping frames) it first does
// less per frame, down the steps of FACE_EFFORT_LADDER. Frames are dropped only when the last step
// is not enough. It goes back up a step once the lighter one has kept up, with the thread idle at
// least half the time, for long enough that the heavier one is likely to keep up as well.

export interface Effort {
  /** YuNet reads frames scaled down to at most this width; 0: at their own size. */
  detectionWidth: number;
  /** Per track, the classifier runs on every this many frames (ClassifyCadence). */
  classifyEvery: number;
}

/**
 * Full effort, then each step lighter than the one before. These steps, because they are the
 * ones measured (ops/bench/README-capacity.md, "A second step of face effort"; "Face analysis
 * per frame"; ops/bench/README-expressions.md, "Defaults, and why"): detection on a 480 px
 * picture with each track's answer held a frame costs 28-39 % less CPU per frame (-0.013 top-1
 * on the test photos, -0.031 macro recall on the development set) and lets one host on two cores
 * keep up with 10 sessions of the heaviest stream instead of 8; 320 px halves detection again
 * (-0.022 top-1), at the price of the smallest, darkest faces (ops/bench/README-small-faces.md).
 * Constants, not settings: an operator has no figures to choose other steps by.
 */
export const FACE_EFFORT_LADDER: readonly Effort[] = [
  { detectionWidth: 0, classifyEvery: 1 },
  { detectionWidth: 480, classifyEvery: 2 },
  { detectionWidth: 320, classifyEvery: 2 },
];

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
  private readonly levels = FACE_EFFORT_LADDER;
  private levelNow = 0;
  private readonly seconds: Second[] = [];
  /** Below full: since when no frame was dropped and the thread was idle enough. */
  private calmSince: number | undefined;
  private lastReview: number | undefined;
  private changedAt: number | undefined;

  constructor(
    /** How long a lighter step must stay calm before the thread steps back up. */
    private readonly calmMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

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

// How much work the face thread puts into each stream's frames. At full effort it analyses every
// face of every frame at the frame's size; when the thread cannot keep up (it is dropping frames)
// it does less for one stream at a time, down the steps of FACE_EFFORT_LADDER: the stream that
// costs the thread most first, never below the step its own faces need to stay found (its floor,
// StreamFloor). One user's heavy streams are lowered before anyone's small faces are lost. Only
// when every stream is at its floor and frames are still dropped is the thread saturated: the
// host then stops admitting sessions rather than blind the running ones. It goes back up a step,
// one stream at a time, once the thread has kept up, idle at least half the time, for long
// enough that the heavier step is likely to keep up as well.
import { detectionSize, type Size } from './detection-scale.ts';

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
 * The narrowest face (YuNet's box), in pixels of the picture YuNet reads, that a step may bring a
 * stream's faces down to. Measured (ops/bench/face-floor.ts, ops/bench/README-small-faces.md, "The
 * smallest face a step keeps"): four faces whose boxes are 15.6 px or wider were all found sure
 * enough to start a track (score >= 0.75) at every step; at 14.4-15.3 px one of four was not, at
 * 12-14 px two, at 11-12 px three. So a step is allowed while the smallest face stays 16 px wide.
 */
export const MIN_DETECTABLE_FACE_PX = 16;
/** A stream's floor remembers its smallest tracked face this long: a small face turned away a while still counts. */
const FLOOR_MEMORY_MS = 30_000;
/**
 * A stream is analysed at full effort this long from its first analysed frame before its floor
 * is known: a step too light for its faces would never find them, so they could never raise it.
 */
const FIRST_LOOK_MS = 10_000;

/**
 * A step goes down past this share of frames dropped within WINDOW_MS: the capacity bound. A
 * step taken is judged once it has run that long, on its own frames: right after a change the
 * frames already waiting still carry the load of the step before.
 */
const STEP_DOWN_PAST_DROPPED = 0.01;
const WINDOW_MS = 5000;
/**
 * With every stream at its floor, the thread is saturated (and the host takes no new session)
 * only past these: over 5 % of frames dropped, out of enough frames to say so, from at least two
 * streams. One stream alone, or a busy moment costing a frame or two (at 4 fps one frame is 5 %
 * of a single stream's window), is the streams' own matter, not a full host's.
 */
const SATURATED = { droppedShare: 0.05, frames: 40, streams: 2 };
/**
 * A lighter step goes back up after `calmMs` (FACE_EFFORT_CALM_SECONDS) without a frame dropped
 * and with the thread busy at most this share of the time: each step up costs up to 1.6 times as
 * much, so it should still leave the thread some idle time.
 */
const HEAVIER_FITS_BELOW = 0.5;

/** What a stream's analysis tells the policy and reads from it. */
export interface StreamEffort {
  readonly current: Effort;
  /** Steps below full effort: 0 is full. */
  readonly level: number;
  /** A frame was offered; `dropped`: it replaced one that was waiting `waitedMs`, which is lost. */
  offered(dropped: boolean, waitedMs?: number): void;
  /** The widths of the faces tracked in an analysed frame of `frame`'s size, in frame pixels. */
  tracked(faceWidths: readonly number[], frame: Size): void;
  /** Seconds of the thread's work spent on this stream (its share of model calls). */
  worked(seconds: number): void;
}

/** A stream as a review weighed it: its level, its floor, and its seconds of the thread's recent work. */
export interface WeighedStream {
  stream: number;
  level: number;
  floor: number;
  work: number;
}

/** What one review changed. */
export interface EffortReview {
  /** Streams whose effort changed, with the level each is at now. */
  changed: { stream: number; level: number }[];
  /**
   * Present when a stream went a step down because the thread dropped frames: every stream it
   * was chosen among (the costliest of those above their floor), for the log.
   */
  chosenAmong?: WeighedStream[];
  /** Present when the thread's saturation changed: every stream at its floor and still dropping. */
  saturated?: { saturated: boolean; detail?: string };
}

interface Timed<T> {
  at: number;
  value: T;
}

/** Per-second buckets over a sliding span. */
class Buckets<T> {
  private readonly list: Timed<T>[] = [];

  constructor(private readonly fresh: () => T) {}

  /** The bucket of the second at `at`. */
  at(at: number): T {
    let last = this.list.at(-1);
    if (!last || at - last.at >= 1000) this.list.push((last = { at, value: this.fresh() }));
    return last.value;
  }

  keep(at: number, spanMs: number): void {
    while (this.list.length > 0 && at - this.list[0]!.at > spanMs) this.list.shift();
  }

  clear(): void {
    this.list.length = 0;
  }

  values(): T[] {
    return this.list.map((bucket) => bucket.value);
  }
}

class Stream implements StreamEffort {
  level = 0;
  overBudget = false;
  private readonly work = new Buckets(() => ({ seconds: 0 }));
  /** Per second, for each step of the ladder: the narrowest tracked face in YuNet's picture at that step. */
  private readonly faces = new Buckets(() => FACE_EFFORT_LADDER.map(() => Infinity));
  private firstAnalysed: number | undefined;

  constructor(
    private readonly policy: FaceEffort,
    private readonly now: () => number,
    /** Frames a second the stream is meant to offer. */
    private readonly fps: number,
  ) {}

  get current(): Effort {
    return FACE_EFFORT_LADDER[this.level]!;
  }

  offered(dropped: boolean, waitedMs = Infinity): void {
    // A frame replaced before it had waited half a frame's interval came in a burst (its server
    // sent several at once): those frames replace one another whatever the thread does. Such a
    // drop is the stream's own, not the thread falling behind, and lowers nobody's effort.
    this.policy.countFrame(dropped && waitedMs >= 500 / this.fps);
  }

  tracked(faceWidths: readonly number[], frame: Size): void {
    this.firstAnalysed ??= this.now();
    if (faceWidths.length === 0) return;
    const narrowest = Math.min(...faceWidths);
    const smallest = this.faces.at(this.now());
    FACE_EFFORT_LADDER.forEach(({ detectionWidth }, step) => {
      const scaled = (narrowest * detectionSize(frame, detectionWidth).width) / frame.width;
      smallest[step] = Math.min(smallest[step]!, scaled);
    });
  }

  worked(seconds: number): void {
    this.work.at(this.now()).seconds += seconds;
  }

  /**
   * The lowest step that keeps every face tracked within FLOOR_MEMORY_MS at MIN_DETECTABLE_FACE_PX
   * or wider; full effort until the stream has had its first look.
   */
  floor(at: number): number {
    if (this.looking(at)) return 0;
    this.faces.keep(at, FLOOR_MEMORY_MS);
    const smallest = FACE_EFFORT_LADDER.map((_, step) => Math.min(...this.faces.values().map((widths) => widths[step]!)));
    let floor = 0;
    while (floor + 1 < FACE_EFFORT_LADDER.length && smallest[floor + 1]! >= MIN_DETECTABLE_FACE_PX) floor++;
    return floor;
  }

  /** Still in its first look: its floor is not known yet. */
  looking(at: number): boolean {
    return this.firstAnalysed === undefined || at - this.firstAnalysed < FIRST_LOOK_MS;
  }

  /** Seconds of work within WINDOW_MS. */
  recentWork(at: number): number {
    this.work.keep(at, WINDOW_MS);
    return this.work.values().reduce((sum, bucket) => sum + bucket.seconds, 0);
  }
}

export class FaceEffort {
  private readonly streams = new Map<number, Stream>();
  private readonly frames = new Buckets(() => ({ offered: 0, dropped: 0 }));
  /** Below full: since when no frame was dropped and the thread was idle enough. */
  private calmSince: number | undefined;
  private lastReview: number | undefined;
  private changedAt: number | undefined;
  private saturated = false;

  constructor(
    /** How long a lighter step must stay calm before a stream steps back up. */
    private readonly calmMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** A stream offering `fps` frames a second joins at full effort. */
  open(id: number, fps = Infinity): StreamEffort {
    const stream = new Stream(this, this.now, fps);
    this.streams.set(id, stream);
    return stream;
  }

  close(id: number): void {
    this.streams.delete(id);
  }

  /** The host says the stream costs more than one session may: it is lowered first, to its floor. */
  setOverBudget(id: number, over: boolean): void {
    const stream = this.streams.get(id);
    if (stream) stream.overBudget = over;
  }

  /** A frame of some stream was offered (StreamEffort.offered). */
  countFrame(dropped: boolean): void {
    const second = this.frames.at(this.now());
    second.offered++;
    if (dropped) {
      second.dropped++;
      this.calmSince = undefined;
    }
  }

  /** Called about once a second with the share of the last second the thread was busy (its event loop utilisation). */
  review(busyShare: number): EffortReview {
    const at = this.now();
    const since = this.lastReview ?? at;
    this.lastReview = at;
    this.frames.keep(at, WINDOW_MS);
    const floors = new Map([...this.streams].map(([id, stream]) => [id, stream.floor(at)]));
    const changed: EffortReview['changed'] = [];
    const move = (id: number, level: number) => {
      this.streams.get(id)!.level = level;
      changed.push({ stream: id, level });
    };
    // Faces smaller than a stream's step can find: back up to its floor at once.
    for (const [id, stream] of this.streams) if (stream.level > floors.get(id)!) move(id, floors.get(id)!);
    // Over budget: the host's word, one step a review whatever the thread's drops.
    for (const [id, stream] of this.streams) if (stream.overBudget && stream.level < floors.get(id)!) move(id, stream.level + 1);
    if (changed.length > 0) return this.changedNow(changed, at);

    const judged = this.changedAt === undefined || at - this.changedAt >= WINDOW_MS;
    const dropped = this.droppedShare();
    if (judged && dropped > STEP_DOWN_PAST_DROPPED) {
      const costliest = this.costliestAboveFloor(at, floors);
      if (costliest !== undefined) {
        const chosenAmong = [...this.streams].map(([id, stream]) => ({ stream: id, level: stream.level, floor: floors.get(id)!, work: stream.recentWork(at) }));
        move(costliest, this.streams.get(costliest)!.level + 1);
        return { ...this.changedNow(changed, at), chosenAmong };
      }
      // A stream still in its first look may well go lower once it is over: not saturated yet.
      if ([...this.streams.values()].some((stream) => stream.looking(at))) return { changed };
      if (dropped <= SATURATED.droppedShare || this.offered() < SATURATED.frames || this.streams.size < SATURATED.streams) {
        return { changed, ...this.saturation(false) };
      }
      const detail = `${(dropped * 100).toFixed(1)} % of frames dropped within ${WINDOW_MS / 1000} s with each of ${this.streams.size} streams at its floor`;
      return { changed, ...this.saturation(true, detail) };
    }
    const saturation = judged ? this.saturation(false) : {};
    if (busyShare > HEAVIER_FITS_BELOW) {
      this.calmSince = undefined;
      return { changed, ...saturation };
    }
    this.calmSince ??= since;
    const cheapest = at - this.calmSince >= this.calmMs ? this.cheapestBelowFull(at) : undefined;
    if (cheapest === undefined) return { changed, ...saturation };
    move(cheapest, this.streams.get(cheapest)!.level - 1);
    return { ...this.changedNow(changed, at), ...saturation };
  }

  /** Each change is judged on its own: the drops and calm before it are forgotten. */
  private changedNow(changed: EffortReview['changed'], at: number): EffortReview {
    this.changedAt = at;
    this.frames.clear();
    this.calmSince = undefined;
    return { changed };
  }

  private saturation(saturated: boolean, detail?: string): Pick<EffortReview, 'saturated'> {
    if (saturated === this.saturated) return {};
    this.saturated = saturated;
    return { saturated: detail === undefined ? { saturated } : { saturated, detail } };
  }

  private droppedShare(): number {
    let dropped = 0;
    for (const second of this.frames.values()) dropped += second.dropped;
    const offered = this.offered();
    return offered === 0 ? 0 : dropped / offered;
  }

  /** Frames offered within WINDOW_MS. */
  private offered(): number {
    let offered = 0;
    for (const second of this.frames.values()) offered += second.offered;
    return offered;
  }

  /** The stream with the largest share of the thread's recent work that may still go a step lower. */
  private costliestAboveFloor(at: number, floors: ReadonlyMap<number, number>): number | undefined {
    let costliest: number | undefined;
    let most = -1;
    for (const [id, stream] of this.streams) {
      if (stream.level >= floors.get(id)!) continue;
      const work = stream.recentWork(at);
      if (work > most) [costliest, most] = [id, work];
    }
    return costliest;
  }

  /** The stream below full effort with the smallest share of the thread's recent work; over-budget ones stay down. */
  private cheapestBelowFull(at: number): number | undefined {
    let cheapest: number | undefined;
    let least = Infinity;
    for (const [id, stream] of this.streams) {
      if (stream.level === 0 || stream.overBudget) continue;
      const work = stream.recentWork(at);
      if (work < least) [cheapest, least] = [id, work];
    }
    return cheapest;
  }
}

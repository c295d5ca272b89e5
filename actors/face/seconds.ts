// Per-second aggregation of analysed frames into result rows.
// A second is complete once a frame of a later second arrives (frames come in time order),
// or on flush. Then each track seen in it gives one FaceSecond (mean class probabilities over
// its frames in that second, dominant = argmax) and the second gives one VideoSecond.
import type { FaceSecond, VideoSecond } from '../../bus/contracts/rows.ts';
import { CLASS_COUNT } from './expressions.ts';
import { dominantEmotion, toEmotionOrder } from './emotions.ts';

export interface TrackedExpression {
  track: number;
  /** Class probabilities in EXPRESSION_CLASSES order. */
  probabilities: ArrayLike<number>;
}

export interface SecondRows {
  onFaceSecond(row: FaceSecond): void;
  onVideoSecond(row: VideoSecond): void;
}

interface TrackSum {
  sums: Float64Array;
  frames: number;
}

interface OpenSecond {
  frames: number;
  faces: number;
  dropped: number;
  /** The most steps below full effort any of its frames was analysed at. */
  effort: number;
  tracks: Map<number, TrackSum>;
}

export class SecondAggregator {
  private readonly open = new Map<number, OpenSecond>();
  private emittedThrough = -1;

  constructor(
    private readonly session: string,
    private readonly rows: SecondRows,
  ) {}

  /** `effort`: the steps below full effort the frame was analysed at (FaceEffort). */
  addFrame(second: number, faces: readonly TrackedExpression[], effort = 0): void {
    this.emitBefore(second);
    const state = this.stateOf(Math.max(second, this.emittedThrough + 1));
    state.frames++;
    state.effort = Math.max(state.effort, effort);
    state.faces = Math.max(state.faces, faces.length);
    for (const face of faces) {
      let sum = state.tracks.get(face.track);
      if (!sum) {
        sum = { sums: new Float64Array(CLASS_COUNT), frames: 0 };
        state.tracks.set(face.track, sum);
      }
      for (let c = 0; c < CLASS_COUNT; c++) sum.sums[c]! += face.probabilities[c]!;
      sum.frames++;
    }
  }

  /** Counts a frame that was skipped unanalysed. */
  addDropped(second: number): void {
    this.stateOf(Math.max(second, this.emittedThrough + 1)).dropped++;
  }

  /** Emits every second still open. */
  flush(): void {
    this.emitBefore(Infinity);
  }

  private stateOf(second: number): OpenSecond {
    let state = this.open.get(second);
    if (!state) {
      state = { frames: 0, faces: 0, dropped: 0, effort: 0, tracks: new Map() };
      this.open.set(second, state);
    }
    return state;
  }

  private emitBefore(limit: number): void {
    const due = [...this.open.keys()].filter((second) => second < limit).sort((a, b) => a - b);
    // A VideoSecond needs at least one analysed frame; drops of a second in which nothing
    // was analysed are counted in the next second that has a row, so no drop goes unreported.
    let carried = 0;
    for (const second of due) {
      const state = this.open.get(second)!;
      this.open.delete(second);
      this.emittedThrough = Math.max(this.emittedThrough, second);
      if (state.frames === 0) {
        carried += state.dropped;
        continue;
      }
      this.emit(second, state, carried);
      carried = 0;
    }
    if (carried > 0 && Number.isFinite(limit)) this.stateOf(limit).dropped += carried;
  }

  private emit(second: number, state: OpenSecond, carriedDrops: number): void {
    for (const [track, { sums, frames }] of state.tracks) {
      const probabilities = toEmotionOrder(Array.from(sums, (sum) => sum / frames));
      this.rows.onFaceSecond({
        session: this.session,
        second,
        track,
        probabilities,
        dominant: dominantEmotion(probabilities),
        frames,
      });
    }
    this.rows.onVideoSecond({
      session: this.session,
      second,
      frames: state.frames,
      faces: state.faces,
      dropped: state.dropped + carriedDrops,
      effort: state.effort,
    });
  }
}

// Per-track temporal smoothing of class probabilities: each face's probabilities become the
// mean of its track's last `frames` frames (the current one included), so one odd frame (a
// blink, a motion blur) weighs less. A track's history is forgotten once it has gone unseen
// for longer than the tracker keeps tracks.
import { CLASS_COUNT } from '../../../actors/face/index.ts';

interface History {
  /** Ring of the last `frames` probability rows. */
  rows: Float32Array;
  filled: number;
  next: number;
  lastFrame: number;
}

export class TrackSmoother {
  private readonly histories = new Map<number, History>();
  private frame = 0;

  constructor(
    /** Frames per window; 1 passes probabilities through unchanged. */
    private readonly frames: number,
    /** Frames a track may go unseen before its history is dropped. */
    private readonly forgetAfterFrames: number,
  ) {
    if (!Number.isInteger(frames) || frames < 1) throw new Error(`smoothing window ${frames} is not a whole number >= 1`);
  }

  /** Tracks currently remembered. */
  get size(): number {
    return this.histories.size;
  }

  /** One frame: `tracks[i]` is the track of row i of `probabilities` (CLASS_COUNT values each). */
  smooth(tracks: readonly number[], probabilities: Float32Array): Float32Array {
    this.frame++;
    if (this.frames === 1) return probabilities;
    const out = new Float32Array(tracks.length * CLASS_COUNT);
    tracks.forEach((track, i) => {
      let history = this.histories.get(track);
      if (!history) {
        history = { rows: new Float32Array(this.frames * CLASS_COUNT), filled: 0, next: 0, lastFrame: 0 };
        this.histories.set(track, history);
      }
      history.rows.set(probabilities.subarray(i * CLASS_COUNT, (i + 1) * CLASS_COUNT), history.next * CLASS_COUNT);
      history.next = (history.next + 1) % this.frames;
      history.filled = Math.min(history.filled + 1, this.frames);
      history.lastFrame = this.frame;
      for (let row = 0; row < history.filled; row++) {
        for (let c = 0; c < CLASS_COUNT; c++) out[i * CLASS_COUNT + c]! += history.rows[row * CLASS_COUNT + c]!;
      }
      for (let c = 0; c < CLASS_COUNT; c++) out[i * CLASS_COUNT + c]! /= history.filled;
    });
    for (const [track, history] of this.histories) {
      if (this.frame - history.lastFrame > this.forgetAfterFrames) this.histories.delete(track);
    }
    return out;
  }
}

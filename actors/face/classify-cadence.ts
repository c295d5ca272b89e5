// Which tracked faces of a frame the expression classifier runs on, when it need not run on
// every face of every frame (the face effort's lighter steps, FACE_EFFORT_LADDER): a track's last answer is held for the
// frames between. A face-second stays the mean of its frames' probabilities with each held frame
// repeating an answer from the same second, never an older one: a track is classified on its
// first frame of every second, then on every `every`-th frame, and whenever its box has moved or
// changed size enough that the crop shows something else. A track absent from a frame loses
// its answer.
import { iou, type Box } from './box.ts';
import { CLASS_COUNT } from './expressions.ts';

interface Held {
  second: number;
  /** The box the answer was measured on. */
  box: Box;
  /** Frames since then that reused it. */
  reused: number;
  probabilities: Float32Array;
}

export class ClassifyCadence {
  private held = new Map<number, Held>();

  constructor(
    /** Classify a track on every this many of its frames; 1: every frame. */
    private readonly every = 1,
    /** A box overlapping the classified one by less than this is classified again. */
    private readonly minIou = 0.8,
  ) {
    if (!Number.isInteger(every) || every < 1) throw new Error(`classification cadence ${every} is not a whole number >= 1`);
  }

  /**
   * The faces of this frame to classify, by index into `tracks` / `boxes` (ascending); `every`:
   * this frame's cadence, when the face thread has reduced its effort (FaceEffort).
   */
  due(second: number, tracks: readonly number[], boxes: readonly Box[], every = this.every): number[] {
    const due: number[] = [];
    tracks.forEach((track, i) => {
      const held = this.held.get(track);
      const fresh = held && held.second === second && held.reused + 1 < every && iou(held.box, boxes[i]!) >= this.minIou;
      if (!fresh) due.push(i);
    });
    return due;
  }

  /**
   * Every face's probabilities (rows of CLASS_COUNT, in `tracks` order): `answers` for the faces
   * `due` returned (in that order), the held answer for the others. Remembers only this frame's tracks.
   */
  merge(second: number, tracks: readonly number[], boxes: readonly Box[], due: readonly number[], answers: Float32Array): Float32Array {
    const out = new Float32Array(tracks.length * CLASS_COUNT);
    const next = new Map<number, Held>();
    let answer = 0;
    tracks.forEach((track, i) => {
      let held: Held;
      if (due[answer] === i) {
        const { x, y, width, height } = boxes[i]!;
        const probabilities = answers.slice(answer * CLASS_COUNT, (answer + 1) * CLASS_COUNT);
        held = { second, box: { x, y, width, height }, reused: 0, probabilities };
        answer++;
      } else {
        held = this.held.get(track)!;
        held.reused++;
      }
      out.set(held.probabilities, i * CLASS_COUNT);
      next.set(track, held);
    });
    this.held = next;
    return out;
  }
}

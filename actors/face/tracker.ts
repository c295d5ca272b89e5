// Gives each detected face a track id that stays the same from frame to frame.
// Matching is greedy by overlap: the best-overlapping (track, face) pair is joined first, and
// neither takes part in another pair, so one track never covers two faces of a frame. A
// track that finds no face is kept for a few frames (a turned head, a hand in front) and
// then forgotten; a face that matches no track starts a new one.
import { iou, type Box } from './box.ts';

export interface TrackerOptions {
  /** Least overlap for a face to continue a track. */
  minIou?: number;
  /** Consecutive frames a track may go unseen before it is forgotten. */
  maxMissedFrames?: number;
}

interface Track {
  id: number;
  box: Box;
  missed: number;
}

export class Tracker {
  private readonly minIou: number;
  private readonly maxMissedFrames: number;
  private tracks: Track[] = [];
  private nextId = 0;

  constructor(options: TrackerOptions = {}) {
    this.minIou = options.minIou ?? 0.3;
    this.maxMissedFrames = options.maxMissedFrames ?? 4;
  }

  /** Returns the track id of each box of one frame, in the order given. */
  update(boxes: readonly Box[]): number[] {
    const pairs: { track: number; box: number; overlap: number }[] = [];
    this.tracks.forEach((track, t) => {
      boxes.forEach((box, b) => {
        const overlap = iou(track.box, box);
        if (overlap >= this.minIou) pairs.push({ track: t, box: b, overlap });
      });
    });
    pairs.sort((p, q) => q.overlap - p.overlap);

    const ids = new Array<number>(boxes.length).fill(-1);
    const trackTaken = new Array<boolean>(this.tracks.length).fill(false);
    for (const pair of pairs) {
      if (trackTaken[pair.track] || ids[pair.box] !== -1) continue;
      trackTaken[pair.track] = true;
      const track = this.tracks[pair.track]!;
      ids[pair.box] = track.id;
      track.box = copyBox(boxes[pair.box]!);
      track.missed = 0;
    }

    this.tracks.forEach((track, t) => {
      if (!trackTaken[t]) track.missed++;
    });
    this.tracks = this.tracks.filter((track) => track.missed <= this.maxMissedFrames);
    boxes.forEach((box, b) => {
      if (ids[b] !== -1) return;
      ids[b] = this.nextId++;
      this.tracks.push({ id: ids[b], box: copyBox(box), missed: 0 });
    });
    return ids;
  }
}

function copyBox({ x, y, width, height }: Box): Box {
  return { x, y, width, height };
}

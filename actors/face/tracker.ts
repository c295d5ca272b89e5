// Gives each detected face a track id that stays the same from frame to frame, so that a track
// is one person. Small, dim faces are found in some frames and not others, and their boxes jitter
// by a fifth of their size; so a face continues the track whose last box is nearest (centres
// less than 0.6 of a face apart, sizes alike), not the one it overlaps most, and a track outlives
// several frames without its face. Matching is greedy: the nearest (track, face) pair is joined
// first, and neither takes part in another pair, so one track never covers two faces of a frame.
// A face that continues no track starts one only if the detector is sure of it: a false
// detection hovering near the detector's threshold would otherwise start a new track each time
// it flickers back.
import type { Box } from './box.ts';

export interface Detection extends Box {
  score: number;
}

export interface TrackerOptions {
  /** Consecutive frames a track may go unseen before it is forgotten. */
  maxMissedFrames?: number;
  /** Least detector score for a face that continues no track to start one. */
  minStartScore?: number;
}

/** A face's centre moves less than this share of the track's size between frames. */
const MAX_SHIFT = 0.6;
/** A face's side is within this factor of the track's. */
const MAX_SIZE_RATIO = 1.5;

interface Track {
  id: number;
  box: Box;
  missed: number;
}

/** Not followed: neither continuing a track nor sure enough to start one. */
export const UNTRACKED = -1;

export class Tracker {
  private readonly maxMissedFrames: number;
  private readonly minStartScore: number;
  private tracks: Track[] = [];
  private nextId = 0;

  constructor(options: TrackerOptions = {}) {
    this.maxMissedFrames = options.maxMissedFrames ?? 4;
    this.minStartScore = options.minStartScore ?? 0.75;
  }

  /** Returns the track id of each face of one frame, in the order given, or UNTRACKED. */
  update(faces: readonly Detection[]): number[] {
    const pairs: { track: number; face: number; shift: number }[] = [];
    this.tracks.forEach((track, t) => {
      faces.forEach((face, f) => {
        const shift = shiftOf(track.box, face);
        if (shift !== undefined) pairs.push({ track: t, face: f, shift });
      });
    });
    pairs.sort((p, q) => p.shift - q.shift);

    const ids = new Array<number>(faces.length).fill(UNTRACKED);
    const trackTaken = new Array<boolean>(this.tracks.length).fill(false);
    for (const pair of pairs) {
      if (trackTaken[pair.track] || ids[pair.face] !== UNTRACKED) continue;
      trackTaken[pair.track] = true;
      const track = this.tracks[pair.track]!;
      ids[pair.face] = track.id;
      track.box = copyBox(faces[pair.face]!);
      track.missed = 0;
    }

    this.tracks.forEach((track, t) => {
      if (!trackTaken[t]) track.missed++;
    });
    this.tracks = this.tracks.filter((track) => track.missed <= this.maxMissedFrames);
    faces.forEach((face, f) => {
      if (ids[f] !== UNTRACKED || face.score < this.minStartScore) return;
      ids[f] = this.nextId++;
      this.tracks.push({ id: ids[f], box: copyBox(face), missed: 0 });
    });
    return ids;
  }
}

/** How far the face's centre is from the track's, in track sizes; undefined if it cannot be the same face. */
function shiftOf(track: Box, face: Box): number | undefined {
  const ratio = Math.sqrt((face.width * face.height) / (track.width * track.height));
  if (ratio > MAX_SIZE_RATIO || ratio < 1 / MAX_SIZE_RATIO) return undefined;
  const size = Math.sqrt(track.width * track.height);
  const dx = face.x + face.width / 2 - (track.x + track.width / 2);
  const dy = face.y + face.height / 2 - (track.y + track.height / 2);
  const shift = Math.hypot(dx, dy) / size;
  return shift < MAX_SHIFT ? shift : undefined;
}

function copyBox({ x, y, width, height }: Box): Box {
  return { x, y, width, height };
}

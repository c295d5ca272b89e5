// The transcript's words per timeline interval. A segment's words are shared among the
// intervals it overlaps in proportion to the overlap, so one that crosses a boundary counts
// once in all, wherever the intervals fall.
import type { Window } from './timeline-window.ts';

/** A transcript segment: seconds since the session's start, and its words. */
export interface TimedWords {
  start: number;
  end: number;
  words: number;
}

/** Words per interval index, for every interval some segment overlaps (its words may be 0). */
export function wordsPerInterval(segments: Iterable<TimedWords>, window: Window): Map<number, number> {
  const { start: from, end: to, granularity } = window;
  const words = new Map<number, number>();
  for (const segment of segments) {
    const length = segment.end - segment.start;
    const start = Math.max(segment.start, from);
    const end = Math.min(segment.end, to);
    if (!(length > 0) || end <= start) continue;
    const last = Math.ceil((end - from) / granularity) - 1;
    for (let bucket = Math.floor((start - from) / granularity); bucket <= last; bucket++) {
      const overlap = Math.min(end, from + (bucket + 1) * granularity) - Math.max(start, from + bucket * granularity);
      if (overlap > 0) words.set(bucket, (words.get(bucket) ?? 0) + (segment.words * overlap) / length);
    }
  }
  return words;
}

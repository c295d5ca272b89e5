// Whether the segments fall where the speaker's sentences end, and how long after its end a
// sentence's transcript comes. A transcript is prompt and whole when its segment ends with the
// sentence: not long after (run on into the next sentence, or held open by background voices),
// not before (its last word cut off).
import type { Sentence } from './speech-corpus.ts';
import { SAMPLE_RATE } from './speech.ts';

/** A segment ending this long before a sentence's end still ends with it: the VAD trims a soft last sound, and the padding is 0.1 s. */
const EARLY_SECONDS = 0.25;
/** The segmentation target: a segment ends within this long after the sentence does. */
export const ENDS_WITHIN_SECONDS = 1.5;

interface TimedSegment {
  start: number;
  end: number;
  /** When the segment was handed to transcription, seconds into the track. */
  cutAt: number;
  /** Seconds its transcription took. */
  transcribedIn: number;
}

const endOf = (sentence: Sentence) => (sentence.start + sentence.length) / SAMPLE_RATE;

/** The share of `sentences` that some segment ends with. */
export function shareEndingASegment(sentences: readonly Sentence[], segments: readonly Pick<TimedSegment, 'end'>[]): number {
  const ending = sentences.filter((sentence) => {
    const end = endOf(sentence);
    return segments.some((segment) => segment.end >= end - EARLY_SECONDS && segment.end <= end + ENDS_WITHIN_SECONDS);
  });
  return ending.length / sentences.length;
}

/**
 * Per sentence, seconds from its end to its transcript: until its segment (the first to end
 * with it or after it) was cut, plus that segment's transcription. Sentences no segment holds
 * have none.
 */
export function transcriptLatencies(sentences: readonly Sentence[], segments: readonly TimedSegment[]): number[] {
  return sentences.flatMap((sentence) => {
    const end = endOf(sentence);
    const holding = segments.find((segment) => segment.end >= end - EARLY_SECONDS && segment.start < end);
    return holding ? [holding.cutAt - end + holding.transcribedIn] : [];
  });
}

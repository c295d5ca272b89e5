// The speaking rate of each transcribed speech segment. The voice analysis knows how much of a
// segment was speech, the transcription what was said; the two meet here, keyed by the
// segment's start, as the transcript row carries no more of the segment than its times.
import type { SpeechSegment } from '../../bus/contracts/rows.ts';
import { speakingRate } from '../../bus/prosody.ts';
import { countWords } from '../../bus/words.ts';
import type { SpeechAudio } from '../voice/analyzer.ts';

const key = (seconds: number) => Math.round(seconds * 1000);

export class SpeakingRates {
  /** Speech seconds of the segments sent to transcription, by start in ms, oldest first. */
  private readonly speech = new Map<number, number>();

  /** `pending`: segments the transcription holds at most (waiting and in progress). */
  constructor(private readonly pending: number) {}

  heard(segment: SpeechAudio): void {
    this.speech.set(key(segment.start), segment.speech);
    // Older ones were dropped by the transcription or transcribed empty: no row will come.
    for (const [heard] of this.speech) {
      if (this.speech.size <= this.pending) break;
      this.speech.delete(heard);
    }
  }

  /** The row with its words and speaking rate. */
  transcribed(row: SpeechSegment): SpeechSegment {
    const start = key(row.start);
    // Rows come in the order their segments were heard; older entries are segments the
    // transcription dropped or found empty.
    for (const [heard] of this.speech) {
      if (heard >= start) break;
      this.speech.delete(heard);
    }
    const speechSeconds = this.speech.get(start);
    this.speech.delete(start);
    const words = countWords(row.text);
    if (speechSeconds === undefined) return { ...row, words };
    const rate = speakingRate(words, speechSeconds);
    return rate === undefined ? { ...row, words, speechSeconds } : { ...row, words, speechSeconds, speakingRate: rate };
  }
}

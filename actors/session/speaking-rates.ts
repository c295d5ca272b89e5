// The words and speaking rate of a transcribed speech segment: the transcription says what was
// said, the voice analysis how much of the segment was speech. The queue hands each row the
// segment it came from, so the two meet whatever was dropped or transcribed empty before it.
import type { SpeechSegment } from '../../bus/contracts/rows.ts';
import { speakingRate } from '../../bus/prosody.ts';
import { countWords } from '../../bus/words.ts';

/** The row with its words, its speech time and, when there was speech, its speaking rate. */
export function withSpeakingRate(row: SpeechSegment, speechSeconds: number): SpeechSegment {
  const words = countWords(row.text);
  const rate = speakingRate(words, speechSeconds);
  return rate === undefined ? { ...row, words, speechSeconds } : { ...row, words, speechSeconds, speakingRate: rate };
}

// Speech segments from a stream of VAD probabilities, with hysteresis: speech starts on a
// confident step, survives short dips, and ends only after a stretch of clear non-speech.
// That stretch is long while a segment is short: a speaker's pause inside a sentence ("ask
// not ... what your country") must not cut it, or the transcriber hears each part without the
// other and writes "As not." Once a segment is long, a shorter pause ends it, so that
// continuous talk is cut between sentences and not mid-word at the maximum length.
// Under a crowd the VAD hears speech in the speaker's pauses too; the caller marks the steps
// whose level is only the background's (BackgroundLevel), and those count as a pause: a short
// one ends a segment when the VAD alone would not have, since the speaker's own pauses inside
// a sentence seldom sink to the crowd's level.
// Pure: works on sample indices and knows nothing of models or audio.
import { DEFAULT_BACKGROUND_LEVEL, type BackgroundLevelOptions } from './background-level.ts';
import { SAMPLE_RATE } from './pcm.ts';
import { DEFAULT_SPEAKER_LEVEL, type SpeakerLevelOptions } from './speaker-level.ts';

export interface SegmenterOptions {
  /** A step at or above this starts speech. */
  startThreshold: number;
  /** Speech continues while steps stay at or above this. */
  endThreshold: number;
  /** Samples below endThreshold that end a segment. */
  endSilence: number;
  /** A segment whose speech spans at least `longLength` samples ends after `longEndSilence` instead. */
  longLength: number;
  longEndSilence: number;
  /** Samples of a pause the VAD hears as speech at the background's level that end a segment. */
  crowdEndSilence: number;
  /** When a step is at the background's level. */
  background: BackgroundLevelOptions;
  /** When a finished segment is only the background talking, and so not the speaker's. */
  speaker: SpeakerLevelOptions;
  /** Longer speech is cut into segments of this many samples. */
  maxLength: number;
  /** Segments with less speech than this are clicks and coughs, not speech. */
  minSpeech: number;
  /** Samples added before and after the detected speech, so word edges are not clipped. */
  padding: number;
}

export const DEFAULT_SEGMENTER: SegmenterOptions = {
  startThreshold: 0.5,
  endThreshold: 0.35,
  endSilence: 1.2 * SAMPLE_RATE,
  longLength: 5 * SAMPLE_RATE,
  longEndSilence: 0.5 * SAMPLE_RATE,
  crowdEndSilence: 0.5 * SAMPLE_RATE,
  background: DEFAULT_BACKGROUND_LEVEL,
  speaker: DEFAULT_SPEAKER_LEVEL,
  maxLength: 20 * SAMPLE_RATE,
  minSpeech: 0.25 * SAMPLE_RATE,
  padding: 0.1 * SAMPLE_RATE,
};

/** Samples [start, end), of which `speech` were in steps at or above the start threshold. */
export interface SampleSpan {
  start: number;
  end: number;
  speech: number;
}

export class SpeechSegmenter {
  private speaking = false;
  private start = 0;
  private lastSpeech = 0;
  private previousEnd = 0;
  private speech = 0;

  constructor(private readonly options: SegmenterOptions = DEFAULT_SEGMENTER) {}

  /**
   * Feeds the probability of the step covering samples [start, end), and whether its level is
   * the loud background's; returns a finished segment if any.
   */
  step(probability: number, start: number, end: number, background = false): SampleSpan | undefined {
    const { startThreshold, endThreshold, maxLength, padding } = this.options;
    if (!this.speaking) {
      if (probability < startThreshold || background) return undefined;
      this.speaking = true;
      this.start = Math.max(this.previousEnd, start - padding);
      this.lastSpeech = end;
      this.speech = end - start;
      return undefined;
    }
    const heard = probability >= endThreshold;
    if (probability >= startThreshold && !background) this.speech += end - start;
    if (heard && !background) this.lastSpeech = end;
    else if (end - this.lastSpeech >= this.silenceToEnd(heard)) return this.close(end);
    if (end - this.start >= maxLength) {
      const span = this.emit(this.start, end);
      this.start = end;
      return span;
    }
    return undefined;
  }

  /** Ends the stream at sample `end`, closing an open segment. */
  finish(end: number): SampleSpan | undefined {
    return this.speaking ? this.close(end) : undefined;
  }

  /** The pause that ends the segment; `crowd`: the VAD still hears speech, at the background's level. */
  private silenceToEnd(crowd: boolean): number {
    const { endSilence, longLength, longEndSilence, crowdEndSilence } = this.options;
    const pause = this.lastSpeech - this.start >= longLength ? longEndSilence : endSilence;
    return crowd ? Math.min(pause, crowdEndSilence) : pause;
  }

  private close(end: number): SampleSpan | undefined {
    this.speaking = false;
    if (this.lastSpeech - this.start < this.options.minSpeech) return undefined;
    return this.emit(this.start, Math.min(end, this.lastSpeech + this.options.padding));
  }

  private emit(start: number, end: number): SampleSpan {
    this.previousEnd = end;
    const span = { start, end, speech: this.speech };
    this.speech = 0;
    return span;
  }
}

// The voice actor's analysis of one session's audio: per-second rows (pitch, level, voicing,
// speech share) and speech segments for transcription. Everything advances in 32 ms steps;
// a step belongs to the second in which its last sample falls.
import type { AudioSecond } from '../../bus/contracts/rows.ts';
import type { InferenceTimer } from '../models/inference-timer.ts';
import type { ort } from '../models/onnx.ts';
import { AudioHistory } from './history.ts';
import { dbfsFromPower, sumOfSquares } from './level.ts';
import { S16Decoder, SAMPLE_RATE } from './pcm.ts';
import { PitchTracker } from './pitch.ts';
import { DEFAULT_SEGMENTER, SpeechSegmenter } from './segmenter.ts';
import { VAD_STEP, VoiceActivityDetector } from './vad.ts';

/** A stretch of speech; start and end in seconds since the session's start. */
export interface SpeechAudio {
  start: number;
  end: number;
  samples: Float32Array;
}

export interface VoiceAnalyzerOptions {
  session: string;
  /** Seconds since the session's start of the first sample. */
  startOffset: number;
  /** The host's Silero VAD session. */
  voiceActivity: ort.InferenceSession;
  /** Times the VAD's calls for the host's metrics. */
  inferenceTimer?: InferenceTimer;
  onSecond(row: AudioSecond): void;
  onSegment(segment: SpeechAudio): void;
}

const STEP = VAD_STEP;
/** Pitch frames span two steps (64 ms): enough periods for a 60 Hz voice. */
const FRAME = 2 * STEP;
const SPEECH_PROBABILITY = DEFAULT_SEGMENTER.startThreshold;
/** Holds the longest segment plus the silence that ends it and its padding. */
const HISTORY = DEFAULT_SEGMENTER.maxLength + DEFAULT_SEGMENTER.endSilence + 2 * DEFAULT_SEGMENTER.padding + FRAME;

class SecondTotals {
  second = -1;
  samples = 0;
  squares = 0;
  frames = 0;
  voicedFrames = 0;
  voicedHz = 0;
  vadSteps = 0;
  speechSteps = 0;

  reset(second: number): void {
    this.second = second;
    this.samples = this.squares = this.frames = this.voicedFrames = this.voicedHz = this.vadSteps = this.speechSteps = 0;
  }
}

export class VoiceAnalyzer {
  private readonly decoder = new S16Decoder();
  private readonly pitch = new PitchTracker(FRAME);
  private readonly segmenter = new SpeechSegmenter();
  private readonly history = new AudioHistory(HISTORY);
  /** The last FRAME samples; the step being filled occupies the last STEP of them. */
  private readonly frame = new Float32Array(FRAME);
  private filled = 0;
  /** Samples of completed steps. */
  private consumed = 0;
  private readonly totals = new SecondTotals();
  private readonly vad: VoiceActivityDetector;

  constructor(private readonly options: VoiceAnalyzerOptions) {
    this.vad = new VoiceActivityDetector(options.voiceActivity, options.inferenceTimer);
  }

  /** Feeds raw s16le PCM; callers await each push before the next. */
  async push(chunk: Buffer): Promise<void> {
    const samples = this.decoder.decode(chunk);
    let offset = 0;
    while (offset < samples.length) {
      const take = Math.min(STEP - this.filled, samples.length - offset);
      const part = samples.subarray(offset, offset + take);
      this.frame.set(part, FRAME - STEP + this.filled);
      this.history.write(part);
      this.filled += take;
      offset += take;
      if (this.filled === STEP) await this.step();
    }
  }

  /** Ends the stream: reports the last, partial second and closes an open segment. */
  async flush(): Promise<void> {
    if (this.filled > 0) {
      // Too short for the models; it still counts towards the level.
      this.enterSecond(this.consumed + this.filled);
      this.totals.samples += this.filled;
      this.totals.squares += sumOfSquares(this.frame, FRAME - STEP, FRAME - STEP + this.filled);
      this.consumed += this.filled;
      this.filled = 0;
    }
    if (this.totals.samples > 0) this.emitSecond();
    this.totals.reset(-1);
    const span = this.segmenter.finish(this.consumed);
    if (span) this.emitSegment(span.start, span.end);
  }

  private async step(): Promise<void> {
    const start = this.consumed;
    const end = start + STEP;
    this.enterSecond(end);
    const totals = this.totals;
    const olderSquares = sumOfSquares(this.frame, 0, FRAME - STEP);
    const stepSquares = sumOfSquares(this.frame, FRAME - STEP, FRAME);
    totals.samples += STEP;
    totals.squares += stepSquares;

    const hz = this.pitch.frequency(this.frame, (olderSquares + stepSquares) / FRAME);
    totals.frames++;
    if (hz > 0) {
      totals.voicedFrames++;
      totals.voicedHz += hz;
    }

    const probability = await this.vad.step(this.frame.subarray(FRAME - STEP));
    totals.vadSteps++;
    if (probability >= SPEECH_PROBABILITY) totals.speechSteps++;
    const span = this.segmenter.step(probability, start, end);

    this.frame.copyWithin(0, STEP);
    this.filled = 0;
    this.consumed = end;
    if (span) this.emitSegment(span.start, span.end);
  }

  /** Makes the totals those of the second holding sample `end - 1`, reporting the previous one. */
  private enterSecond(end: number): void {
    const second = Math.floor(this.options.startOffset + (end - 1) / SAMPLE_RATE);
    if (second === this.totals.second) return;
    if (this.totals.samples > 0) this.emitSecond();
    this.totals.reset(second);
  }

  private emitSecond(): void {
    const t = this.totals;
    this.options.onSecond({
      session: this.options.session,
      second: t.second,
      frequency: t.voicedFrames > 0 ? t.voicedHz / t.voicedFrames : 0,
      intensity: dbfsFromPower(t.squares / t.samples),
      voiced: t.frames > 0 ? t.voicedFrames / t.frames : 0,
      speech: t.vadSteps > 0 ? t.speechSteps / t.vadSteps : 0,
    });
  }

  private emitSegment(start: number, end: number): void {
    const offset = this.options.startOffset;
    this.options.onSegment({
      start: offset + start / SAMPLE_RATE,
      end: offset + end / SAMPLE_RATE,
      samples: this.history.copy(start, end),
    });
  }
}

// The voice analysis of one stream: per-second rows (pitch, level, voicing, speech share) and
// speech segments for transcription. Everything advances in 32 ms steps; a step belongs to the
// second in which its last sample falls. The analyser does not call the VAD itself: a driver
// (VoiceStreams) takes a step from every stream that has one, runs the model once for all of
// them, and hands each its probability back.
import type { AudioSecond } from '../../bus/contracts/rows.ts';
import { pauseRatio, pitchVariability, semitones } from '../../bus/prosody.ts';
import { BackgroundLevel } from './background-level.ts';
import { AudioHistory } from './history.ts';
import { dbfsFromPower, segmentVoice, sumOfSquares } from './level.ts';
import { S16Decoder, SAMPLE_RATE } from './pcm.ts';
import { PitchTracker } from './pitch.ts';
import { SampleQueue } from './sample-queue.ts';
import { DEFAULT_SEGMENTER, SpeechSegmenter, type SampleSpan, type SegmenterOptions } from './segmenter.ts';
import { SpeakerLevel } from './speaker-level.ts';
import { VAD_STEP, VadStream } from './vad.ts';

/** A stretch of speech; start and end in seconds since the session's start. */
export interface SpeechAudio {
  start: number;
  end: number;
  /** Seconds of it the VAD judged as speech. */
  speech: number;
  samples: Float32Array;
}

export interface VoiceAnalyzerOptions {
  session: string;
  /** Seconds since the session's start of the first sample. */
  startOffset: number;
  onSecond(row: AudioSecond): void;
  onSegment(segment: SpeechAudio): void;
  /** A segment was left untranscribed as the room's: the background talking while the speaker was silent (SpeakerLevel). */
  onRoomSegment?(segment: Omit<SpeechAudio, 'samples'>): void;
  /** Where speech segments start and end; DEFAULT_SEGMENTER unless a benchmark compares others. */
  segmenter?: SegmenterOptions;
}

const STEP = VAD_STEP;
/** Pitch frames span two steps (64 ms): enough periods for a 60 Hz voice. */
const FRAME = 2 * STEP;
/** Samples of audio kept: the longest segment plus the silence that ends it and its padding. */
const historyLength = ({ maxLength, endSilence, longEndSilence, padding }: SegmenterOptions) =>
  maxLength + Math.max(endSilence, longEndSilence) + 2 * padding + FRAME;

class SecondTotals {
  second = -1;
  samples = 0;
  squares = 0;
  frames = 0;
  voicedFrames = 0;
  voicedHz = 0;
  semitoneSum = 0;
  semitoneSquares = 0;
  vadSteps = 0;
  speechSteps = 0;
  /** Samples where the first speech step of the second starts and the last one ends. */
  speechStart = 0;
  speechEnd = 0;

  reset(second: number): void {
    this.second = second;
    this.samples = this.squares = this.frames = this.voicedFrames = this.voicedHz = 0;
    this.semitoneSum = this.semitoneSquares = this.vadSteps = this.speechSteps = this.speechStart = this.speechEnd = 0;
  }
}

export class VoiceAnalyzer {
  private readonly decoder = new S16Decoder();
  private readonly pitch = new PitchTracker(FRAME);
  private readonly segmenter: SpeechSegmenter;
  private readonly background: BackgroundLevel;
  private readonly speaker: SpeakerLevel;
  /** Mean power of the step in progress. */
  private stepPower = 0;
  /** A step this likely is speech: the segmenter's start threshold. */
  private readonly speechProbability: number;
  private readonly history: AudioHistory;
  private readonly queue = new SampleQueue();
  /** The last FRAME samples; the step in progress occupies the last STEP of them. */
  private readonly frame = new Float32Array(FRAME);
  /** Samples of completed steps, and of gaps shed. */
  private consumed = 0;
  private readonly totals = new SecondTotals();
  private readonly vad = new VadStream();

  constructor(private readonly options: VoiceAnalyzerOptions) {
    const segmenter = options.segmenter ?? DEFAULT_SEGMENTER;
    this.segmenter = new SpeechSegmenter(segmenter);
    this.background = new BackgroundLevel(segmenter.background);
    this.speaker = new SpeakerLevel(segmenter.speaker);
    this.speechProbability = segmenter.startThreshold;
    this.history = new AudioHistory(historyLength(segmenter));
  }

  /** Queues raw s16le PCM. */
  write(chunk: Buffer): void {
    this.queue.push(this.decoder.decode(chunk).slice());
  }

  /** Samples queued and not analysed yet. */
  get backlog(): number {
    return this.queue.length;
  }

  /**
   * Starts the next step if a whole one is queued: its level and pitch, and the VAD window to
   * run. endStep() must follow, with the probability, before anything else is called.
   */
  beginStep(): VadStream | undefined {
    if (this.queue.length < STEP) return undefined;
    const step = this.frame.subarray(FRAME - STEP);
    this.queue.read(step);
    this.history.write(step);
    this.enterSecond(this.consumed + STEP);
    const totals = this.totals;
    const olderSquares = sumOfSquares(this.frame, 0, FRAME - STEP);
    const stepSquares = sumOfSquares(this.frame, FRAME - STEP, FRAME);
    totals.samples += STEP;
    totals.squares += stepSquares;
    this.stepPower = stepSquares / STEP;
    const hz = this.pitch.frequency(this.frame, (olderSquares + stepSquares) / FRAME);
    totals.frames++;
    if (hz > 0) {
      const tone = semitones(hz);
      totals.voicedFrames++;
      totals.voicedHz += hz;
      totals.semitoneSum += tone;
      totals.semitoneSquares += tone * tone;
    }
    this.vad.load(step);
    return this.vad;
  }

  /** Completes the step begun with the speech probability of its samples. */
  endStep(probability: number): void {
    const start = this.consumed;
    const end = start + STEP;
    const totals = this.totals;
    totals.vadSteps++;
    if (probability >= this.speechProbability) {
      if (totals.speechSteps++ === 0) totals.speechStart = start;
      totals.speechEnd = end;
    }
    const span = this.segmenter.step(probability, start, end, this.background.step(this.stepPower, probability));
    this.frame.copyWithin(0, STEP);
    this.consumed = end;
    if (span) this.emitSegment(span);
  }

  /**
   * Drops the oldest queued samples, keeping the newest `keep`, when analysis has fallen behind.
   * The stream's clock moves on over the gap, whose seconds get no rows, and speech in progress
   * ends where the gap begins. Returns the samples dropped.
   */
  shed(keep: number): number {
    const dropped = this.queue.drop(Math.max(0, this.queue.length - keep));
    if (dropped === 0) return 0;
    const span = this.segmenter.finish(this.consumed);
    if (span) this.emitSegment(span);
    this.consumed += dropped;
    this.history.skip(dropped);
    // The pitch frame would join samples on either side of the gap.
    this.frame.fill(0);
    return dropped;
  }

  /** Ends the stream: the queued remainder (under one step) counts towards the last second's level, and open speech ends. */
  flush(): void {
    const rest = this.queue.length;
    if (rest > 0) {
      // Too short for the models; it still counts towards the level.
      const tail = this.frame.subarray(FRAME - STEP, FRAME - STEP + rest);
      this.queue.read(tail);
      this.history.write(tail);
      this.enterSecond(this.consumed + rest);
      this.totals.samples += rest;
      this.totals.squares += sumOfSquares(tail, 0, rest);
      this.consumed += rest;
    }
    if (this.totals.samples > 0) this.emitSecond();
    this.totals.reset(-1);
    const span = this.segmenter.finish(this.consumed);
    if (span) this.emitSegment(span);
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
    const row: AudioSecond = {
      session: this.options.session,
      second: t.second,
      frequency: t.voicedFrames > 0 ? t.voicedHz / t.voicedFrames : 0,
      intensity: dbfsFromPower(t.squares / t.samples),
      voiced: t.frames > 0 ? t.voicedFrames / t.frames : 0,
      speech: t.vadSteps > 0 ? t.speechSteps / t.vadSteps : 0,
      voicedFrames: t.voicedFrames,
      semitoneSum: t.semitoneSum,
      semitoneSquares: t.semitoneSquares,
      speechSeconds: (t.speechSteps * STEP) / SAMPLE_RATE,
    };
    const variability = pitchVariability(t.voicedFrames, t.semitoneSum, t.semitoneSquares);
    if (variability !== undefined) row.pitchVariability = variability;
    if (t.speechSteps > 0) {
      row.speechStart = this.secondsOf(t.speechStart);
      row.speechEnd = this.secondsOf(t.speechEnd);
      row.pauseRatio = pauseRatio(row.speechSeconds!, row.speechStart, row.speechEnd);
    }
    this.options.onSecond(row);
  }

  /** Hands a segment on for transcription, unless it is only the background talking while the speaker is silent. */
  private emitSegment(span: SampleSpan): void {
    const samples = this.history.copy(span.start, span.end);
    const segment = { start: this.secondsOf(span.start), end: this.secondsOf(span.end), speech: span.speech / SAMPLE_RATE };
    if (this.speaker.keeps(segmentVoice(samples), segment.end, this.background.talks)) this.options.onSegment({ ...segment, samples });
    else this.options.onRoomSegment?.(segment);
  }

  /** Seconds since the session's start of sample `index` of the stream. */
  private secondsOf(index: number): number {
    return this.options.startOffset + index / SAMPLE_RATE;
  }
}

// What each periodic channel sends: the rows of one period folded into one payload. Pure: rows
// in, a payload out at the end of the period, nothing when the period brought no rows.
// Rows are checked against their contracts, so a malformed row is skipped, never fatal.
import type { Static, TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import {
  AudioSecond,
  CustomEvent,
  EMOTION_KEYS,
  FaceSecond,
  SpeechSegment,
  type EmotionKey,
} from '../../bus/contracts/rows.ts';
import type { PublicEvent } from '../../bus/contracts/events.ts';
import { pauseRatio, pitchVariability } from '../../bus/prosody.ts';
import type { Channel } from './protocol.ts';

export interface Aggregator {
  /** Takes one live message: an array of rows of the channel's kind. */
  add(rows: unknown): void;
  /** The period's payload, or undefined when nothing came; starts the next period. */
  flush(): object | undefined;
  /** Whether the period holds so much that it should be sent before its end. */
  readonly full: boolean;
}

export type PeriodicChannel = Exclude<Channel, 'session_worker_state'>;

/** Lists (segments, events) are sent early once they hold this many items, to bound memory and frame size. */
export const MAX_ITEMS_PER_MESSAGE = 1000;

export function createAggregator(channel: PeriodicChannel): Aggregator {
  switch (channel) {
    case 'session_emotions_counts':
      return new EmotionCounts();
    case 'session_emotions_intensities':
      return new EmotionIntensities();
    case 'session_audio_features':
      return new AudioFeatures();
    case 'session_transcription':
      return new ListOf(SpeechSegment, 'segments', ({ session: _s, ...segment }: SpeechSegment) => segment);
    case 'session_custom_events':
      return new ListOf(CustomEvent, 'events', ({ id: _id, ...event }: CustomEvent): PublicEvent => event);
  }
}

function validRows<T extends TSchema>(schema: T) {
  const check = TypeCompiler.Compile(schema);
  return function* (rows: unknown): Generator<Static<T>> {
    if (!Array.isArray(rows)) return;
    for (const row of rows) if (check.Check(row)) yield row;
  };
}

const faceRows = validRows(FaceSecond);
const audioRows = validRows(AudioSecond);
const SILENCE_FLOOR_DBFS = -100;
const round = (value: number, digits: number) => Math.round(value * 10 ** digits) / 10 ** digits;
const zeroPerEmotion = () => Object.fromEntries(EMOTION_KEYS.map((key) => [key, 0])) as Record<EmotionKey, number>;

/** The seconds of the session a period's rows cover: [from, to). */
class SecondsSpan {
  private from = Infinity;
  private to = -Infinity;

  include(second: number): void {
    if (second < this.from) this.from = second;
    if (second + 1 > this.to) this.to = second + 1;
  }

  take(): { from: number; to: number } {
    const span = { from: this.from, to: this.to };
    this.from = Infinity;
    this.to = -Infinity;
    return span;
  }
}

/** Face-seconds per dominant emotion, and how many distinct faces (tracks) were seen. */
class EmotionCounts implements Aggregator {
  readonly full = false;
  private counts = zeroPerEmotion();
  private faceSeconds = 0;
  private readonly tracks = new Set<number>();
  private readonly span = new SecondsSpan();

  add(rows: unknown): void {
    for (const row of faceRows(rows)) {
      this.counts[row.dominant]++;
      this.faceSeconds++;
      this.tracks.add(row.track);
      this.span.include(row.second);
    }
  }

  flush(): object | undefined {
    if (!this.faceSeconds) return undefined;
    const payload = { ...this.span.take(), faceSeconds: this.faceSeconds, tracks: this.tracks.size, emotions: this.counts };
    this.counts = zeroPerEmotion();
    this.faceSeconds = 0;
    this.tracks.clear();
    return payload;
  }
}

/** Mean probability of each emotion over every face-second of the period. */
class EmotionIntensities implements Aggregator {
  readonly full = false;
  private readonly sums = new Float64Array(EMOTION_KEYS.length);
  private faceSeconds = 0;
  private readonly span = new SecondsSpan();

  add(rows: unknown): void {
    for (const row of faceRows(rows)) {
      row.probabilities.forEach((p, i) => (this.sums[i] = (this.sums[i] ?? 0) + p));
      this.faceSeconds++;
      this.span.include(row.second);
    }
  }

  flush(): object | undefined {
    if (!this.faceSeconds) return undefined;
    const emotions = zeroPerEmotion();
    EMOTION_KEYS.forEach((key, i) => (emotions[key] = round((this.sums[i] ?? 0) / this.faceSeconds, 4)));
    const payload = { ...this.span.take(), faceSeconds: this.faceSeconds, emotions };
    this.sums.fill(0);
    this.faceSeconds = 0;
    return payload;
  }
}

/**
 * As the audio features timeline: frequency is the mean over voiced seconds (0 if none),
 * intensity the power mean of the seconds' levels, in dBFS; pitch variability and pause ratio
 * from the period's sums, absent when it does not define them. The speaking rate needs the
 * transcript, which comes later: it is on the transcription channel's segments.
 */
class AudioFeatures implements Aggregator {
  readonly full = false;
  private seconds = 0;
  private voicedSeconds = 0;
  private frequencySum = 0;
  private powerSum = 0;
  private voicedFrames = 0;
  private semitoneSum = 0;
  private semitoneSquares = 0;
  private speechSeconds = 0;
  private speechStart = Infinity;
  private speechEnd = -Infinity;
  private readonly span = new SecondsSpan();

  add(rows: unknown): void {
    for (const row of audioRows(rows)) {
      this.seconds++;
      if (row.frequency > 0) {
        this.voicedSeconds++;
        this.frequencySum += row.frequency;
      }
      this.powerSum += 10 ** (row.intensity / 10);
      this.voicedFrames += row.voicedFrames ?? 0;
      this.semitoneSum += row.semitoneSum ?? 0;
      this.semitoneSquares += row.semitoneSquares ?? 0;
      if (row.speechSeconds && row.speechStart !== undefined && row.speechEnd !== undefined) {
        this.speechSeconds += row.speechSeconds;
        this.speechStart = Math.min(this.speechStart, row.speechStart);
        this.speechEnd = Math.max(this.speechEnd, row.speechEnd);
      }
      this.span.include(row.second);
    }
  }

  flush(): object | undefined {
    if (!this.seconds) return undefined;
    const power = this.powerSum / this.seconds;
    const variability = pitchVariability(this.voicedFrames, this.semitoneSum, this.semitoneSquares);
    const pauses = pauseRatio(this.speechSeconds, this.speechStart, this.speechEnd);
    const payload = {
      ...this.span.take(),
      seconds: this.seconds,
      voicedSeconds: this.voicedSeconds,
      frequency: this.voicedSeconds ? round(this.frequencySum / this.voicedSeconds, 2) : 0,
      // The analysis reports digital silence as -100 dBFS; the same floor keeps the mean finite.
      intensity: round(Math.max(SILENCE_FLOOR_DBFS, 10 * Math.log10(power)), 2),
      speechSeconds: round(this.speechSeconds, 3),
      ...(variability === undefined ? {} : { pitchVariability: round(variability, 2) }),
      ...(pauses === undefined ? {} : { pauseRatio: round(pauses, 4) }),
    };
    this.seconds = this.voicedSeconds = this.frequencySum = this.powerSum = 0;
    this.voicedFrames = this.semitoneSum = this.semitoneSquares = this.speechSeconds = 0;
    this.speechStart = Infinity;
    this.speechEnd = -Infinity;
    return payload;
  }
}

/** Items as they came, in one list per period under `name`. */
class ListOf<T extends TSchema, Item> implements Aggregator {
  private items: Item[] = [];
  private readonly rows: ReturnType<typeof validRows<T>>;

  constructor(
    schema: T,
    private readonly name: string,
    private readonly present: (row: Static<T>) => Item,
  ) {
    this.rows = validRows(schema);
  }

  get full(): boolean {
    return this.items.length >= MAX_ITEMS_PER_MESSAGE;
  }

  add(rows: unknown): void {
    for (const row of this.rows(rows)) this.items.push(this.present(row));
  }

  flush(): object | undefined {
    if (!this.items.length) return undefined;
    const payload = { [this.name]: this.items };
    this.items = [];
    return payload;
  }
}

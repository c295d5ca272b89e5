// Timelines and totals read back per session (spec 4.6-4.9), and the transcript list.
import { Type, type Static } from '@sinclair/typebox';
import { Caller, Offset, Page, Session } from './session.ts';
import { EMOTION_KEYS } from './rows.ts';

/** Seconds into a session a query may name: decades, far beyond any session, exact in a double. */
const MAX_SECONDS = 1_000_000_000;

export const TimelineQuery = Type.Object(
  {
    granularity: Type.Integer({ minimum: 5, maximum: 3600, default: 60 }),
    start: Type.Number({ minimum: 0, maximum: MAX_SECONDS, default: 0 }),
    end: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: MAX_SECONDS })),
    expand: Type.Optional(Type.Literal('session')),
  },
  { additionalProperties: false },
);
export type TimelineQuery = Static<typeof TimelineQuery>;

export const ResultRequest = Type.Object({ caller: Caller, session: Type.String(), query: TimelineQuery });
export type ResultRequest = Static<typeof ResultRequest>;

const SessionField = Type.Union([Type.String(), Session]);
const Decimal = Type.Number();

export const TotalsQuery = Type.Object(
  { expand: Type.Optional(Type.Literal('session')) },
  { additionalProperties: false },
);
export const TotalsRequest = Type.Object({ caller: Caller, session: Type.String(), query: TotalsQuery });
export type TotalsRequest = Static<typeof TotalsRequest>;
export const EmotionTotals = Type.Object({
  session: SessionField,
  emotions: Type.Record(Type.String(), Type.Integer()),
});
export type EmotionTotals = Static<typeof EmotionTotals>;

export const EmotionStats = Type.Object({ people: Type.Integer(), quantity: Decimal, intensity: Decimal });
export const EmotionsEntry = Type.Object({
  start: Type.Number(),
  end: Type.Number(),
  detectedFaces: Type.Integer(),
  emotions: Type.Object(Object.fromEntries(EMOTION_KEYS.map((key) => [key, EmotionStats]))),
  /** Analysed seconds of the interval whose faces were read with reduced effort; absent when none (docs/api.md). */
  reducedEffortSeconds: Type.Optional(Type.Integer({ minimum: 1 })),
});
export type EmotionsEntry = Static<typeof EmotionsEntry>;

export const AudioFeaturesEntry = Type.Object({
  start: Type.Number(),
  end: Type.Number(),
  frequency: Decimal,
  intensity: Decimal,
  // Voice prosody, each absent when the interval does not define it (docs/api.md, "Metrics").
  /** Standard deviation of the voiced pitch, in semitones. */
  pitchVariability: Type.Optional(Decimal),
  /** Words per minute of speech. */
  speakingRate: Type.Optional(Decimal),
  /** Share of the time from the first speech to the last that is not speech. */
  pauseRatio: Type.Optional(Decimal),
});
export type AudioFeaturesEntry = Static<typeof AudioFeaturesEntry>;

export const SentimentEntry = Type.Object({
  start: Type.Number(),
  end: Type.Number(),
  segments: Type.Integer(),
  sentiments: Type.Object({ positive: Decimal, neutral: Decimal, negative: Decimal }),
});
export type SentimentEntry = Static<typeof SentimentEntry>;

export const timelineOf = <T extends ReturnType<typeof Type.Object>>(entry: T) =>
  Type.Object({ session: SessionField, timeline: Type.Array(entry) });

export const SpeechSegmentsQuery = Type.Object(
  {
    start: Type.Number({ minimum: 0, maximum: MAX_SECONDS, default: 0 }),
    end: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: MAX_SECONDS })),
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 10 }),
    offset: Offset,
  },
  { additionalProperties: false },
);
export type SpeechSegmentsQuery = Static<typeof SpeechSegmentsQuery>;
export const SpeechSegmentsRequest = Type.Object({ caller: Caller, session: Type.String(), query: SpeechSegmentsQuery });
export type SpeechSegmentsRequest = Static<typeof SpeechSegmentsRequest>;
export const SpeechSegmentEntry = Type.Object({
  start: Type.Number(),
  end: Type.Number(),
  text: Type.String(),
  sentiments: Type.Object({ positive: Decimal, neutral: Decimal, negative: Decimal, compound: Decimal }),
  /** dB of the segment's voice over its own noise floor; absent on segments stored before it was kept. */
  snrDb: Type.Optional(Decimal),
});
export const SpeechSegmentsPage = Page(SpeechSegmentEntry);
export type SpeechSegmentsPage = Static<typeof SpeechSegmentsPage>;

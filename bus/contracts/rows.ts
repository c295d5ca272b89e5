// Result rows: what the analysis actors publish, what the storage writer inserts, and what
// live subscribers receive. `second` is whole seconds since the session's `timestamp`.
import { Type, type Static } from '@sinclair/typebox';
import { SessionId } from './session.ts';

export const EMOTION_KEYS = [
  'focus', // neutral
  'exaltation', // happy
  'lowEnergy', // sad
  'seriousness', // angry
  'overwhelming', // fearful
  'aversion', // disgusted
  'impact', // surprised
] as const;
export type EmotionKey = (typeof EMOTION_KEYS)[number];

// Bounds of the columns the rows are stored in (UInt32, UInt16, UInt8), so a value never wraps silently.
const UINT32 = 4_294_967_295;
const UINT16 = 65_535;
const UINT8 = 255;
const Second = Type.Integer({ minimum: 0, maximum: UINT32 });
const Count16 = (minimum: number) => Type.Integer({ minimum, maximum: UINT16 });
const Probability = Type.Number({ minimum: 0, maximum: 1 });

/** One second of audio. */
export const AudioSecond = Type.Object({
  session: SessionId,
  second: Second,
  /** Mean fundamental frequency in Hz over the voiced frames of the second; 0 when none was voiced. */
  frequency: Type.Number({ minimum: 0 }),
  /** Level in dBFS (power mean over the second); 0 is full scale. */
  intensity: Type.Number({ maximum: 0 }),
  /** Share of pitch frames in the second that were voiced. */
  voiced: Probability,
  /** Share of VAD steps in the second judged as speech. */
  speech: Probability,
  // Prosody. Optional so rows of publishers older than these fields are still stored.
  /** Voiced pitch frames in the second. */
  voicedFrames: Type.Optional(Count16(0)),
  /** Sum, and sum of squares, of the voiced frames' pitch in semitones (bus/prosody.ts). */
  semitoneSum: Type.Optional(Type.Number()),
  semitoneSquares: Type.Optional(Type.Number({ minimum: 0 })),
  /** Standard deviation of those semitones; absent under two voiced frames. */
  pitchVariability: Type.Optional(Type.Number({ minimum: 0 })),
  /** Seconds of the VAD steps ending in the second that were judged as speech (32 ms each). */
  speechSeconds: Type.Optional(Type.Number({ minimum: 0 })),
  /** Start of the first and end of the last of those steps, seconds since the session's start; absent without speech. */
  speechStart: Type.Optional(Type.Number({ minimum: 0 })),
  speechEnd: Type.Optional(Type.Number({ minimum: 0 })),
  /** 1 - speechSeconds / (speechEnd - speechStart); absent without speech. */
  pauseRatio: Type.Optional(Probability),
});
export type AudioSecond = Static<typeof AudioSecond>;

/** One face track during one second: mean probabilities of its frames in that second. */
export const FaceSecond = Type.Object({
  session: SessionId,
  second: Second,
  track: Type.Integer({ minimum: 0, maximum: UINT32 }),
  /** Probabilities in EMOTION_KEYS order. */
  probabilities: Type.Array(Probability, { minItems: 7, maxItems: 7 }),
  dominant: Type.Union(EMOTION_KEYS.map((key) => Type.Literal(key))),
  frames: Count16(1),
});
export type FaceSecond = Static<typeof FaceSecond>;

/** One second in which video was analysed, with or without faces. */
export const VideoSecond = Type.Object({
  session: SessionId,
  second: Second,
  frames: Count16(1),
  /** Most faces seen in one frame of that second. */
  faces: Count16(0),
  /** Frames the face actor dropped in that second because it was behind. */
  dropped: Count16(0),
  /**
   * Steps below full face effort its frames were analysed at, the most of any frame
   * (actors/face/face-effort.ts, FACE_EFFORT_LADDER): 0 at full effort. Optional so rows of
   * publishers older than it are still stored (as 0).
   */
  effort: Type.Optional(Type.Integer({ minimum: 0, maximum: UINT8 })),
});
export type VideoSecond = Static<typeof VideoSecond>;

/** One transcribed speech segment with its VADER scores. */
export const SpeechSegment = Type.Object({
  session: SessionId,
  /** Seconds from session start, with millisecond precision (stored as UInt32 milliseconds). */
  start: Type.Number({ minimum: 0, maximum: UINT32 / 1000 }),
  end: Type.Number({ minimum: 0, maximum: UINT32 / 1000 }),
  text: Type.String({ minLength: 1 }),
  positive: Probability,
  neutral: Probability,
  negative: Probability,
  compound: Type.Number({ minimum: -1, maximum: 1 }),
  /** Words of the text (bus/words.ts). */
  words: Type.Optional(Type.Integer({ minimum: 0 })),
  /** Seconds of the utterance the VAD judged as speech. */
  speechSeconds: Type.Optional(Type.Number({ minimum: 0 })),
  /** 60 * words / speechSeconds; absent when the VAD heard no speech in it. */
  speakingRate: Type.Optional(Type.Number({ minimum: 0 })),
  /**
   * How far the segment's voice stands above its own noise floor, in dB
   * (segmentSnrDb in actors/voice/level.ts): the estimate that chose its transcriber. Absent on rows of
   * older publishers.
   */
  snrDb: Type.Optional(Type.Number({ minimum: 0 })),
});
export type SpeechSegment = Static<typeof SpeechSegment>;

/** A client's sensor event (spec section 6). */
export const CustomEvent = Type.Object({
  id: Type.String(),
  session: SessionId,
  source: Type.String(),
  user: Type.String(),
  type: Type.Literal('sensor_report'),
  time: Type.Number({ minimum: 0 }),
  data: Type.Union([Type.String(), Type.Number()]),
});
export type CustomEvent = Static<typeof CustomEvent>;

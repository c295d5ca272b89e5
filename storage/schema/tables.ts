// How each kind of result row is stored: its table and its columns.
import { EMOTION_KEYS, type AudioSecond, type CustomEvent, type FaceSecond, type SpeechSegment, type VideoSecond } from '../../bus/contracts/rows.ts';
import { sessionDay } from '../../bus/ids.ts';
import type { RowKind } from '../../bus/subjects.ts';
import { countWords } from '../../bus/words.ts';

export type Columns = Record<string, string | number | null>;

const toColumns: { [K in RowKind]: { table: string; columns(row: never): Columns } } = {
  audio: {
    table: 'audio_seconds',
    // The per-second pitch variability and pause ratio are left out: the sums make them, for a
    // second as for any interval.
    columns: (row: AudioSecond) => ({
      session: row.session,
      second: row.second,
      frequency: row.frequency,
      intensity: row.intensity,
      voiced: row.voiced,
      speech: row.speech,
      voiced_frames: row.voicedFrames ?? 0,
      semitone_sum: row.semitoneSum ?? 0,
      semitone_squares: row.semitoneSquares ?? 0,
      speech_seconds: row.speechSeconds ?? 0,
      speech_start: row.speechStart ?? 0,
      speech_end: row.speechEnd ?? 0,
      day: sessionDay(row.session),
    }),
  },
  video: {
    table: 'video_seconds',
    // A row of a publisher older than `effort` was analysed at full effort.
    columns: (row: VideoSecond) => ({ ...row, effort: row.effort ?? 0, day: sessionDay(row.session) }),
  },
  face: {
    table: 'face_seconds',
    columns: (row: FaceSecond) => ({
      session: row.session,
      second: row.second,
      track: row.track,
      ...Object.fromEntries(EMOTION_KEYS.map((key, i) => [key, row.probabilities[i] ?? 0])),
      dominant: row.dominant,
      frames: row.frames,
      day: sessionDay(row.session),
    }),
  },
  speech: {
    table: 'speech_segments',
    columns: (row: SpeechSegment) => ({
      session: row.session,
      start_ms: Math.round(row.start * 1000),
      end_ms: Math.round(row.end * 1000),
      text: row.text,
      positive: row.positive,
      neutral: row.neutral,
      negative: row.negative,
      compound: row.compound,
      words: countWords(row.text),
      // Rows of publishers from before the estimate store none.
      snr_db: row.snrDb ?? null,
      day: sessionDay(row.session),
    }),
  },
  event: {
    table: 'custom_events',
    columns: (row: CustomEvent) => ({
      session: row.session,
      id: row.id,
      source: row.source,
      user: row.user,
      time: row.time,
      text: typeof row.data === 'string' ? row.data : null,
      value: typeof row.data === 'number' ? row.data : null,
      day: sessionDay(row.session),
    }),
  },
};

export function tableOf(kind: RowKind): string {
  return toColumns[kind].table;
}

export function columnsOf(kind: RowKind, row: unknown): Columns {
  return toColumns[kind].columns(row as never);
}

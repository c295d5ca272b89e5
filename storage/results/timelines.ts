// Timeline queries. Each groups a session's rows into intervals [start + k*g, start + (k+1)*g)
// in ClickHouse, the last one cut at `end`; intervals without rows are not returned.
import type { ClickHouseClient } from '@clickhouse/client';
import { EMOTION_KEYS, type EmotionKey } from '../../bus/contracts/rows.ts';
import type {
  AudioFeaturesEntry,
  EmotionsEntry,
  SentimentEntry,
} from '../../bus/contracts/results.ts';
import { queryRows } from '../clickhouse/clickhouse.ts';
import { sessionDay } from '../../bus/ids.ts';
import { pauseRatio, pitchVariability, speakingRate } from '../../bus/prosody.ts';
import { wordsPerInterval } from './speaking-rate.ts';
import { sql } from '../clickhouse/sql.ts';
import type { Window } from './timeline-window.ts';

/** The bounds of interval `bucket` of a window, in seconds from the session's start. */
export function intervalOf(window: Window, bucket: number): { start: number; end: number } {
  const start = window.start + bucket * window.granularity;
  return { start: round(start), end: round(Math.min(start + window.granularity, window.end)) };
}

const round = (value: number, digits = 3) => Math.round(value * 10 ** digits) / 10 ** digits;
const finite = (value: number) => (Number.isFinite(value) ? value : 0);

function bucketExpression(column: string, window: Window): string {
  return `floor((${column} - ${sql`${window.start}`}) / ${sql`${window.granularity}`})`;
}

/**
 * A session's rows: the partition (the session's creation month, from its day column, which
 * the id tells) is named so ClickHouse skips every other month's parts before the key lookup.
 */
function sessionFilter(session: string): string {
  return sql`day = toDate(${sessionDay(session)}) AND session = ${session}`;
}

function secondsFilter(window: Window): string {
  return `${sessionFilter(window.session)} AND ${sql`second >= ${window.start} AND second < ${window.end}`}`;
}

interface AudioAggregates {
  bucket: number;
  frequency: number;
  intensity: number;
  pitch_frames: number;
  tone_sum: number;
  tone_squares: number;
  speech_total: number;
  first_speech: number;
  last_speech: number;
}

export async function audioFeatures(client: ClickHouseClient, window: Window): Promise<AudioFeaturesEntry[]> {
  const [rows, segments] = await Promise.all([
    queryRows<AudioAggregates>(
      client,
      `SELECT ${bucketExpression('second', window)} AS bucket,
         if(countIf(frequency > 0) = 0, 0, avgIf(frequency, frequency > 0)) AS frequency,
         10 * log10(avg(pow(10, intensity / 10))) AS intensity,
         sum(voiced_frames) AS pitch_frames, sum(semitone_sum) AS tone_sum, sum(semitone_squares) AS tone_squares,
         sum(speech_seconds) AS speech_total,
         minIf(speech_start, speech_seconds > 0) AS first_speech, maxIf(speech_end, speech_seconds > 0) AS last_speech
       FROM audio_seconds FINAL
       WHERE ${secondsFilter(window)}
       GROUP BY bucket
       ORDER BY bucket`,
    ),
    queryRows<{ start_ms: number; end_ms: number; words: number }>(
      client,
      `SELECT start_ms, end_ms, words
       FROM speech_segments FINAL
       WHERE ${sessionFilter(window.session)} AND ${sql`start_ms < ${Math.round(window.end * 1000)}
         AND end_ms > ${Math.round(window.start * 1000)}`}`,
    ),
  ]);
  const words = wordsPerInterval(
    segments.map((row) => ({ start: Number(row.start_ms) / 1000, end: Number(row.end_ms) / 1000, words: Number(row.words) })),
    window,
  );
  return rows.map((row) => audioEntry(window, row, words.get(Number(row.bucket))));
}

/** An interval's entry; `words`: the transcript's words in it, undefined when no segment overlaps it. */
function audioEntry(window: Window, row: AudioAggregates, words: number | undefined): AudioFeaturesEntry {
  const entry: AudioFeaturesEntry = {
    ...intervalOf(window, Number(row.bucket)),
    frequency: round(finite(row.frequency), 2),
    intensity: round(finite(row.intensity), 2),
  };
  const speech = Number(row.speech_total);
  const variability = pitchVariability(Number(row.pitch_frames), Number(row.tone_sum), Number(row.tone_squares));
  const rate = words === undefined ? undefined : speakingRate(words, speech);
  const pauses = pauseRatio(speech, Number(row.first_speech), Number(row.last_speech));
  if (variability !== undefined) entry.pitchVariability = round(variability, 2);
  if (rate !== undefined) entry.speakingRate = round(rate, 1);
  if (pauses !== undefined) entry.pauseRatio = round(pauses, 4);
  return entry;
}

type EmotionAggregates = { bucket: number; faces: number; faceSeconds: number } & Record<
  `${EmotionKey}_${'people' | 'count' | 'intensity'}`,
  number
>;

export async function emotionsTimeline(client: ClickHouseClient, window: Window): Promise<EmotionsEntry[]> {
  const perEmotion = EMOTION_KEYS.map((key) => {
    const dominated = sql`dominant = ${key}`;
    return `uniqExactIf(track, ${dominated}) AS ${key}_people,
       countIf(${dominated}) AS ${key}_count,
       if(countIf(${dominated}) = 0, 0, avgIf(${key}, ${dominated})) AS ${key}_intensity`;
  }).join(',\n       ');
  const [faces, analysed] = await Promise.all([
    queryRows<EmotionAggregates>(
      client,
      `SELECT ${bucketExpression('second', window)} AS bucket,
         uniqExact(track) AS faces,
         count() AS faceSeconds,
         ${perEmotion}
       FROM face_seconds FINAL
       WHERE ${secondsFilter(window)}
       GROUP BY bucket`,
    ),
    queryRows<{ bucket: number; reduced: number }>(
      client,
      `SELECT ${bucketExpression('second', window)} AS bucket, countIf(effort > 0) AS reduced
       FROM video_seconds FINAL
       WHERE ${secondsFilter(window)}
       GROUP BY bucket`,
    ),
  ]);
  const byBucket = new Map(faces.map((row) => [Number(row.bucket), row]));
  const reducedBy = new Map(analysed.map((row) => [Number(row.bucket), Number(row.reduced)]));
  const buckets = new Set([...reducedBy.keys(), ...byBucket.keys()]);
  return [...buckets]
    .sort((a, b) => a - b)
    .map((bucket) => {
      const entry = emotionsEntry(intervalOf(window, bucket), byBucket.get(bucket));
      // Only where the face thread did less for the stream (face-effort.ts): an entry of full
      // effort keeps the spec's shape.
      const reduced = reducedBy.get(bucket) ?? 0;
      return reduced > 0 ? { ...entry, reducedEffortSeconds: reduced } : entry;
    });
}

/** The entry of one interval, exactly as the metric definitions say; no row means no face. */
function emotionsEntry(
  interval: { start: number; end: number },
  row: EmotionAggregates | undefined,
): EmotionsEntry {
  const faceSeconds = row ? Number(row.faceSeconds) : 0;
  const emotions = Object.fromEntries(
    EMOTION_KEYS.map((key) => {
      const count = row ? Number(row[`${key}_count`]) : 0;
      return [
        key,
        {
          people: row ? Number(row[`${key}_people`]) : 0,
          quantity: faceSeconds ? round(count / faceSeconds, 4) : 0,
          intensity: count && row ? round(finite(Number(row[`${key}_intensity`])), 4) : 0,
        },
      ];
    }),
  ) as EmotionsEntry['emotions'];
  return { ...interval, detectedFaces: row ? Number(row.faces) : 0, emotions };
}

export async function emotionTotals(client: ClickHouseClient, session: string): Promise<Record<EmotionKey, number>> {
  const rows = await queryRows<{ dominant: string; seconds: number }>(
    client,
    `SELECT dominant, count() AS seconds FROM face_seconds FINAL WHERE ${sessionFilter(session)} GROUP BY dominant`,
  );
  const totals = Object.fromEntries(EMOTION_KEYS.map((key) => [key, 0])) as Record<EmotionKey, number>;
  for (const row of rows) {
    if (row.dominant in totals) totals[row.dominant as EmotionKey] = Number(row.seconds);
  }
  return totals;
}

export async function sentimentTimeline(client: ClickHouseClient, window: Window): Promise<SentimentEntry[]> {
  const rows = await queryRows<{ bucket: number; segments: number; positive: number; neutral: number; negative: number }>(
    client,
    `SELECT ${bucketExpression('start_ms / 1000', window)} AS bucket,
       count() AS segments, avg(positive) AS positive, avg(neutral) AS neutral, avg(negative) AS negative
     FROM speech_segments FINAL
     WHERE ${sessionFilter(window.session)} AND ${sql`start_ms >= ${Math.round(window.start * 1000)}
       AND start_ms < ${Math.round(window.end * 1000)}`}
     GROUP BY bucket
     ORDER BY bucket`,
  );
  return rows.map((row) => ({
    ...intervalOf(window, Number(row.bucket)),
    segments: Number(row.segments),
    sentiments: {
      positive: round(finite(row.positive), 4),
      neutral: round(finite(row.neutral), 4),
      negative: round(finite(row.negative), 4),
    },
  }));
}

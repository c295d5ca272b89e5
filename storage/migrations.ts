// The schema, as an ordered list of migrations applied once each at start. Every statement is
// in the SQL subset that runs on ClickHouse 18.16 and on current releases alike.
//
// Result tables are ReplacingMergeTree keyed by what makes a row unique (session, second,
// track...), so a batch written twice counts once; queries read them with FINAL. They are
// partitioned by the session's creation month and ordered by (session, time), which is the
// filter of every timeline query.
import type { ClickHouseClient } from '@clickhouse/client';
import { EMOTION_KEYS } from '../bus/contracts/rows.ts';
import { literal } from './sql.ts';

interface Migration {
  id: number;
  statements: (db: string) => string[];
}

const emotionColumns = EMOTION_KEYS.map((key) => `${key} Float32`).join(', ');

export const MIGRATIONS: Migration[] = [
  {
    id: 1,
    statements: (db) => [
      `CREATE TABLE IF NOT EXISTS ${db}.sessions (
        id String, user String, product String, name String, type String, state String,
        created_ms UInt64, created DateTime, revision UInt64, doc String
      ) ENGINE = ReplacingMergeTree(revision) PARTITION BY toYYYYMM(created) ORDER BY (user, created_ms, id)`,
      `CREATE TABLE IF NOT EXISTS ${db}.audio_seconds (
        session String, second UInt32, frequency Float32, intensity Float32, voiced Float32, speech Float32, day Date
      ) ENGINE = ReplacingMergeTree() PARTITION BY toYYYYMM(day) ORDER BY (session, second)`,
      `CREATE TABLE IF NOT EXISTS ${db}.video_seconds (
        session String, second UInt32, frames UInt16, faces UInt16, dropped UInt16, day Date
      ) ENGINE = ReplacingMergeTree() PARTITION BY toYYYYMM(day) ORDER BY (session, second)`,
      `CREATE TABLE IF NOT EXISTS ${db}.face_seconds (
        session String, second UInt32, track UInt32, ${emotionColumns}, dominant String, frames UInt16, day Date
      ) ENGINE = ReplacingMergeTree() PARTITION BY toYYYYMM(day) ORDER BY (session, second, track)`,
      `CREATE TABLE IF NOT EXISTS ${db}.speech_segments (
        session String, start_ms UInt32, end_ms UInt32, text String,
        positive Float32, neutral Float32, negative Float32, compound Float32, day Date
      ) ENGINE = ReplacingMergeTree() PARTITION BY toYYYYMM(day) ORDER BY (session, start_ms)`,
      `CREATE TABLE IF NOT EXISTS ${db}.custom_events (
        session String, id String, source String, user String, time Float64,
        text Nullable(String), value Nullable(Float64), day Date
      ) ENGINE = ReplacingMergeTree() PARTITION BY toYYYYMM(day) ORDER BY (session, time, id)`,
    ],
  },
  {
    // Where each user's sessions and each session's events lie on their sort key, and how many
    // rows they have: a page is read from a window sized by it (storage/windows.ts). Kept by
    // materialized views on every insert; the rows already there are added once here (rows
    // inserted meanwhile count twice, which only makes the count, an estimate, larger).
    id: 2,
    statements: (db) => [
      `CREATE TABLE IF NOT EXISTS ${db}.session_spans (
        user String, first AggregateFunction(min, UInt64), last AggregateFunction(max, UInt64), rows AggregateFunction(count)
      ) ENGINE = AggregatingMergeTree() ORDER BY user`,
      `CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.session_spans_feed TO ${db}.session_spans AS
        SELECT user, minState(created_ms) AS first, maxState(created_ms) AS last, countState() AS rows
        FROM ${db}.sessions GROUP BY user`,
      `INSERT INTO ${db}.session_spans
        SELECT user, minState(created_ms), maxState(created_ms), countState() FROM ${db}.sessions GROUP BY user`,
      `CREATE TABLE IF NOT EXISTS ${db}.event_spans (
        session String, first AggregateFunction(min, Float64), last AggregateFunction(max, Float64), rows AggregateFunction(count), day Date
      ) ENGINE = AggregatingMergeTree() PARTITION BY toYYYYMM(day) ORDER BY session`,
      `CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.event_spans_feed TO ${db}.event_spans AS
        SELECT session, minState(time) AS first, maxState(time) AS last, countState() AS rows, day
        FROM ${db}.custom_events GROUP BY session, day`,
      `INSERT INTO ${db}.event_spans
        SELECT session, minState(time), maxState(time), countState(), day FROM ${db}.custom_events GROUP BY session, day`,
    ],
  },
  {
    // Voice prosody: per second, the sums an interval's pitch variability and pause ratio are
    // made of, so they are exact for any interval; per segment, its words for the speaking
    // rate. Rows from before read zeros: no voiced frame, no speech, no words.
    id: 3,
    statements: (db) => [
      `ALTER TABLE ${db}.audio_seconds
        ADD COLUMN voiced_frames UInt16,
        ADD COLUMN semitone_sum Float64,
        ADD COLUMN semitone_squares Float64,
        ADD COLUMN speech_seconds Float64,
        ADD COLUMN speech_start Float64,
        ADD COLUMN speech_end Float64`,
      `ALTER TABLE ${db}.speech_segments ADD COLUMN words UInt32`,
    ],
  },
];

/** Creates the database and brings the schema up to date; safe to run from several hosts at once. */
export async function migrate(client: ClickHouseClient, database: string): Promise<void> {
  const db = identifier(database);
  await client.command({ query: `CREATE DATABASE IF NOT EXISTS ${db}` });
  await client.command({
    query: `CREATE TABLE IF NOT EXISTS ${db}.schema_migrations (id UInt32, applied DateTime)
      ENGINE = ReplacingMergeTree() ORDER BY id`,
  });
  const result = await client.query({ query: `SELECT id FROM ${db}.schema_migrations`, format: 'JSONEachRow' });
  const applied = new Set((await result.json<{ id: number }>()).map((row) => Number(row.id)));
  for (const migration of MIGRATIONS) {
    if (applied.has(migration.id)) continue;
    for (const statement of migration.statements(db)) await client.command({ query: statement });
    await client.command({ query: `INSERT INTO ${db}.schema_migrations VALUES (${literal(migration.id)}, now())` });
  }
}

function identifier(name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`not a valid ClickHouse identifier: ${name}`);
  return name;
}

// The schema, as an ordered list of migrations applied once each at start. Every statement is
// in the SQL subset that runs on ClickHouse 18.16 and on current releases alike.
//
// Result tables are ReplacingMergeTree keyed by what makes a row unique (session, second,
// track...), so a batch written twice counts once; queries read them with FINAL. They are
// partitioned by the session's creation month and ordered by (session, time), which is the
// filter of every timeline query. On a cluster (storage/schema/schema.ts) they are sharded by session,
// so a session's duplicates meet in one shard for FINAL; the session index and its spans by
// user, whose lists read one user's rows together (a session's user never changes).
//
// A statement names tables through the schema: `schema.createTable`, `schema.alter` for a
// column change (never ALTER by hand: on a cluster it takes three statements and goes to the
// shards' replicas), `schema.local(name)` and `schema.onCluster` for what is written out by hand.
import type { ClickHouseClient } from '@clickhouse/client';
import { EMOTION_KEYS } from '../../bus/contracts/rows.ts';
import { COLUMN_EXISTS, DDL_TIMED_OUT, DDL_WAIT_SECONDS, queryRows } from '../clickhouse/clickhouse.ts';
import type { ClusterNodes } from './cluster-nodes.ts';
import { clickhouseCode } from '../clickhouse/insert-errors.ts';
import { Schema, type Statement } from './schema.ts';
import { literal, sql } from '../clickhouse/sql.ts';

interface Migration {
  id: number;
  statements: (schema: Schema) => Statement[];
}

const bySession = 'cityHash64(session)';
/** On a cluster, the cluster's shards as each node sees them, read from every shard. */
export const SHARD_PROBE = 'cluster_shards';
const byUser = 'cityHash64(user)';

const emotionColumns = EMOTION_KEYS.map((key) => `${key} Float32`).join(', ');

export const MIGRATIONS: Migration[] = [
  {
    id: 1,
    statements: (schema) => [
      ...schema.createTable({
        name: 'sessions',
        columns: `id String, user String, product String, name String, type String, state String,
          created_ms UInt64, created DateTime, revision UInt64, doc String`,
        engine: 'ReplacingMergeTree(revision)',
        keys: 'PARTITION BY toYYYYMM(created) ORDER BY (user, created_ms, id)',
        shardBy: byUser,
      }),
      ...schema.createTable({
        name: 'audio_seconds',
        columns: 'session String, second UInt32, frequency Float32, intensity Float32, voiced Float32, speech Float32, day Date',
        engine: 'ReplacingMergeTree()',
        keys: 'PARTITION BY toYYYYMM(day) ORDER BY (session, second)',
        shardBy: bySession,
      }),
      ...schema.createTable({
        name: 'video_seconds',
        columns: 'session String, second UInt32, frames UInt16, faces UInt16, dropped UInt16, day Date',
        engine: 'ReplacingMergeTree()',
        keys: 'PARTITION BY toYYYYMM(day) ORDER BY (session, second)',
        shardBy: bySession,
      }),
      ...schema.createTable({
        name: 'face_seconds',
        columns: `session String, second UInt32, track UInt32, ${emotionColumns}, dominant String, frames UInt16, day Date`,
        engine: 'ReplacingMergeTree()',
        keys: 'PARTITION BY toYYYYMM(day) ORDER BY (session, second, track)',
        shardBy: bySession,
      }),
      ...schema.createTable({
        name: 'speech_segments',
        columns: `session String, start_ms UInt32, end_ms UInt32, text String,
          positive Float32, neutral Float32, negative Float32, compound Float32, day Date`,
        engine: 'ReplacingMergeTree()',
        keys: 'PARTITION BY toYYYYMM(day) ORDER BY (session, start_ms)',
        shardBy: bySession,
      }),
      ...schema.createTable({
        name: 'custom_events',
        columns: `session String, id String, source String, user String, time Float64,
          text Nullable(String), value Nullable(Float64), day Date`,
        engine: 'ReplacingMergeTree()',
        keys: 'PARTITION BY toYYYYMM(day) ORDER BY (session, time, id)',
        shardBy: bySession,
      }),
    ],
  },
  {
    // Where each user's sessions and each session's events lie on their sort key, and how many
    // rows they have: a page is read from a window sized by it (storage/sessions/windows.ts). Kept by
    // materialized views on every insert; the rows already there are added once here (rows
    // inserted meanwhile count twice, which only makes the count, an estimate, larger).
    // On a cluster each node's view reads the rows inserted into its local table and feeds its
    // local spans, sharded like their source; a replica receives both tables' parts by
    // replication, which runs no view, so nothing is counted twice.
    id: 2,
    statements: (schema) => [
      ...schema.createTable({
        name: 'session_spans',
        columns: 'user String, first AggregateFunction(min, UInt64), last AggregateFunction(max, UInt64), rows AggregateFunction(count)',
        engine: 'AggregatingMergeTree()',
        keys: 'ORDER BY user',
        shardBy: byUser,
      }),
      `CREATE MATERIALIZED VIEW IF NOT EXISTS ${schema.db}.session_spans_feed${schema.onCluster} TO ${schema.local('session_spans')} AS
        SELECT user, minState(created_ms) AS first, maxState(created_ms) AS last, countState() AS rows
        FROM ${schema.local('sessions')} GROUP BY user`,
      `INSERT INTO ${schema.db}.session_spans
        SELECT user, minState(created_ms), maxState(created_ms), countState() FROM ${schema.db}.sessions GROUP BY user`,
      ...schema.createTable({
        name: 'event_spans',
        columns: 'session String, first AggregateFunction(min, Float64), last AggregateFunction(max, Float64), rows AggregateFunction(count), day Date',
        engine: 'AggregatingMergeTree()',
        keys: 'PARTITION BY toYYYYMM(day) ORDER BY session',
        shardBy: bySession,
      }),
      `CREATE MATERIALIZED VIEW IF NOT EXISTS ${schema.db}.event_spans_feed${schema.onCluster} TO ${schema.local('event_spans')} AS
        SELECT session, minState(time) AS first, maxState(time) AS last, countState() AS rows, day
        FROM ${schema.local('custom_events')} GROUP BY session, day`,
      `INSERT INTO ${schema.db}.event_spans
        SELECT session, minState(time), maxState(time), countState(), day FROM ${schema.db}.custom_events GROUP BY session, day`,
    ],
  },
  {
    // Voice prosody: per second, the sums an interval's pitch variability and pause ratio are
    // made of, so they are exact for any interval; per segment, its words for the speaking
    // rate. Rows from before read zeros: no voiced frame, no speech, no words.
    id: 3,
    statements: (schema) => [
      ...schema.alter({ name: 'audio_seconds', shardBy: bySession }, `
        ADD COLUMN voiced_frames UInt16,
        ADD COLUMN semitone_sum Float64,
        ADD COLUMN semitone_squares Float64,
        ADD COLUMN speech_seconds Float64,
        ADD COLUMN speech_start Float64,
        ADD COLUMN speech_end Float64`),
      ...schema.alter({ name: 'speech_segments', shardBy: bySession }, 'ADD COLUMN words UInt32'),
    ],
  },
  {
    // The spans count distinct rows by their key (a session's id, an event's time and id), not
    // inserts: a batch written twice (a storage service lost between its insert and its
    // acknowledgement, the batch redelivered to another) or a session's later revisions no
    // longer raise them, and filling them from the rows already there may run twice. uniq is
    // exact at these sizes and an estimate within 2 % past 65536 rows, which a window's
    // density needs no better. The spans and their feeds are made again: AggregateFunction
    // columns take no type change.
    id: 4,
    statements: (schema) => [
      ...['session_spans', 'event_spans'].flatMap((name) => [
        `DROP TABLE IF EXISTS ${schema.db}.${name}_feed${schema.onCluster}`,
        `DROP TABLE IF EXISTS ${schema.db}.${name}${schema.onCluster}`,
        ...(schema.cluster ? [`DROP TABLE IF EXISTS ${schema.local(name)}${schema.onCluster}`] : []),
      ]),
      ...schema.createTable({
        name: 'session_spans',
        columns: 'user String, first AggregateFunction(min, UInt64), last AggregateFunction(max, UInt64), rows AggregateFunction(uniq, String)',
        engine: 'AggregatingMergeTree()',
        keys: 'ORDER BY user',
        shardBy: byUser,
      }),
      `CREATE MATERIALIZED VIEW IF NOT EXISTS ${schema.db}.session_spans_feed${schema.onCluster} TO ${schema.local('session_spans')} AS
        SELECT user, minState(created_ms) AS first, maxState(created_ms) AS last, uniqState(id) AS rows
        FROM ${schema.local('sessions')} GROUP BY user`,
      `INSERT INTO ${schema.db}.session_spans
        SELECT user, minState(created_ms), maxState(created_ms), uniqState(id) FROM ${schema.db}.sessions GROUP BY user`,
      ...schema.createTable({
        name: 'event_spans',
        columns: 'session String, first AggregateFunction(min, Float64), last AggregateFunction(max, Float64), rows AggregateFunction(uniq, Float64, String), day Date',
        engine: 'AggregatingMergeTree()',
        keys: 'PARTITION BY toYYYYMM(day) ORDER BY session',
        shardBy: bySession,
      }),
      `CREATE MATERIALIZED VIEW IF NOT EXISTS ${schema.db}.event_spans_feed${schema.onCluster} TO ${schema.local('event_spans')} AS
        SELECT session, minState(time) AS first, maxState(time) AS last, uniqState(time, id) AS rows, day
        FROM ${schema.local('custom_events')} GROUP BY session, day`,
      `INSERT INTO ${schema.db}.event_spans
        SELECT session, minState(time), maxState(time), uniqState(time, id), day FROM ${schema.db}.custom_events GROUP BY session, day`,
    ],
  },
  {
    // On a cluster: each node's own shard, read through every shard that answers, which tells
    // a read whether its session's shard is reachable (storage/results/session-shard.ts).
    id: 5,
    statements: (schema) => schema.cluster
      ? [`CREATE TABLE IF NOT EXISTS ${schema.db}.${SHARD_PROBE}${schema.onCluster} (cluster String, shard_num UInt32, is_local UInt8)
          ENGINE = Distributed(${schema.cluster}, system, clusters)`]
      : [],
  },
  {
    // Per video second, the steps below full face effort it was analysed at
    // (actors/face/face-effort.ts); rows from before read 0, full effort, as they were.
    id: 6,
    statements: (schema) => schema.alter({ name: 'video_seconds', shardBy: bySession }, 'ADD COLUMN effort UInt8'),
  },
  {
    // Per speech segment, how far its voice stood above its own noise floor (the estimate that
    // chose its transcriber, segmentSnrDb in actors/voice/level.ts); rows from before read NULL, unknown.
    id: 7,
    statements: (schema) => schema.alter({ name: 'speech_segments', shardBy: bySession }, 'ADD COLUMN snr_db Nullable(Float32)'),
  },
];

/**
 * Creates the database and brings the schema up to date; safe to run from several hosts at
 * once (every statement may run twice). An up-to-date schema issues no DDL at all, so a
 * service starts while a node of the cluster is down (DDL ON CLUSTER would wait for it).
 * `cluster`: the tables are laid out on that cluster (storage/schema/schema.ts).
 */
export async function migrate(client: ClickHouseClient, database: string, cluster?: ClusterNodes): Promise<void> {
  const schema = new Schema(database, cluster?.name);
  let applied = await appliedMigrations(client, schema);
  if (MIGRATIONS.every((migration) => applied.has(migration.id))) return;
  await run(client, schema.createDatabase());
  // On a cluster, one table on every node: any node answers which migrations ran.
  for (const query of schema.createTable({ name: 'schema_migrations', columns: 'id UInt32, applied DateTime', engine: 'ReplacingMergeTree()', keys: 'ORDER BY id' })) {
    await run(client, query);
  }
  applied = await appliedMigrations(client, schema);
  for (const migration of MIGRATIONS) {
    if (applied.has(migration.id)) continue;
    for (const statement of migration.statements(schema)) await apply(client, schema, cluster, statement);
    await client.command({ query: `INSERT INTO ${schema.db}.schema_migrations VALUES (${literal(migration.id)}, now())` });
  }
}

/**
 * Runs one statement of a migration. An ALTER of a table that holds rows goes, on a cluster, to
 * one replica of each shard and returns once every replica has the change; ON CLUSTER when the
 * nodes known here do not reach every shard.
 */
export async function apply(client: ClickHouseClient, schema: Schema, cluster: ClusterNodes | undefined, statement: Statement): Promise<void> {
  if (typeof statement === 'string') return run(client, statement);
  if (cluster && (await cluster.alterEachShard([statement], Date.now() + NODE_WAIT_MS))) return;
  await run(client, schema.onEveryNode(statement));
}

// How long a statement may wait for a slow node before the migration fails (ClickHouse's own
// default wait for distributed DDL).
const NODE_WAIT_MS = 180_000;

/**
 * Runs a statement and waits until every node has run it: a node that is slow to read its DDL
 * queue (a busy disk) makes the server give up waiting for it after DDL_WAIT_SECONDS, and the
 * statement is sent again, queued behind the first; a migration must not be recorded before
 * every node has the table or column its rows will need.
 */
async function run(client: ClickHouseClient, statement: string): Promise<void> {
  const until = Date.now() + NODE_WAIT_MS;
  for (;;) {
    try {
      await client.command({ query: statement, clickhouse_settings: { distributed_ddl_task_timeout: String(DDL_WAIT_SECONDS) } });
      return;
    } catch (error) {
      const code = clickhouseCode(error);
      if (code === COLUMN_EXISTS) return;
      if (code !== DDL_TIMED_OUT || Date.now() >= until) throw error;
    }
  }
}

async function appliedMigrations(client: ClickHouseClient, schema: Schema): Promise<Set<number>> {
  // Asked of system.tables first: a query of a missing table would be logged as an error.
  const [found] = await queryRows<{ n: number }>(client,
    sql`SELECT count() AS n FROM system.tables WHERE database = ${schema.db} AND name = 'schema_migrations'`);
  if (!Number(found?.n)) return new Set();
  const rows = await queryRows<{ id: number }>(client, `SELECT id FROM ${schema.db}.schema_migrations`);
  return new Set(rows.map((row) => Number(row.id)));
}

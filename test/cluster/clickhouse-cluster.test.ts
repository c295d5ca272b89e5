// Storage on a ClickHouse cluster of 2 shards x 2 replicas under ZooKeeper, all started here on
// loopback with a NATS server of its own: the schema is laid out on the cluster (migrated by
// two services at once), rows written by the storage writer are read back from any node, a
// session is purged, and the node the storage service talks to is killed (SIGKILL) while rows
// flow: writes and reads carry on through the next node, no row is lost or counted twice, and
// the node catches up once started again; a node that crashes is started again by itself; a
// node that stalls holds a migration until it has run it, but not a session's deletion. ALTERs of the replicated tables go to
// one replica of each shard, never through the DDL queue, unless the nodes a service knows
// leave a shard out. The time each step takes is printed.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { appendFileSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { readConfig } from '../../bus/config.ts';
import { connectBus } from '../../bus/connection.ts';
import type { SessionRecord } from '../../bus/contracts/session.ts';
import { newSessionId } from '../../bus/ids.ts';
import { createLog } from '../../bus/log.ts';
import { subjects, tenantOf, type RowKind } from '../../bus/subjects.ts';
import { startClickHouseCluster, type ClickHouseCluster, type ClickHouseNode } from '../../ops/stack/clickhouse-cluster.ts';
import { startNats } from '../../ops/stack/nats.ts';
import { freePort } from '../../ops/stack/ports.ts';
import { waitUntil, type Service } from '../../ops/stack/process.ts';
import { connectClickHouse, queryRows, type ClickHouseClient, type ClickHouseServer } from '../../storage/clickhouse/clickhouse.ts';
import { ClusterNodes } from '../../storage/schema/cluster-nodes.ts';
import { apply, migrate, MIGRATIONS } from '../../storage/schema/migrations.ts';
import { purgeSession } from '../../storage/purge/purge.ts';
import { Schema } from '../../storage/schema/schema.ts';
import { StorageService } from '../../storage/service.ts';
import { columnsOf } from '../../storage/schema/tables.ts';
import { listSessions } from '../../storage/sessions/sessions-index.ts';
import { sql } from '../../storage/clickhouse/sql.ts';
import { emotionsTimeline } from '../../storage/results/timelines.ts';
import { httpRequest } from '../../ops/stack/http-client.ts';

const config = readConfig();
const log = createLog(config);
// Its warnings (a node unreachable, a batch refused) explain a failure here.
const storageLog = log.child({ component: 'clickhouse-cluster-test' });
storageLog.level = 'warn';

const DATABASE = 'emotions_cluster';
const dir = join(config.varDir, 'test', `clickhouse-cluster-${process.pid}`);

let nats: Service & { url: string };
let cluster: ClickHouseCluster;
let nc: NatsConnection;
let js: JetStreamClient;
let jsm: JetStreamManager;
let storage: StorageService | undefined;
/** Through every node, the first one first: as the storage service sees them. */
let client: ClickHouseClient;
let server: ClickHouseServer;
/** The nodes as the storage service knows them: for ALTERs on one replica of each shard. */
let nodes: ClusterNodes;
let failed = false;

/** A test of this file; after any failure the cluster's data is kept and its nodes reported. */
const step = (name: string, run: () => Promise<void>) =>
  test(name, () => run().catch((error: unknown) => {
    failed = true;
    throw error;
  }));

const node = (url: string) => connectClickHouse({ url, username: 'default', password: '' }, DATABASE);
const count = async (on: ClickHouseClient, query: string) => Number((await queryRows<{ n: number }>(on, query))[0]?.n ?? 0);

/** The statements the DDL queue has held (ClickHouse keeps a week of them). */
async function ddlQueue(): Promise<string[]> {
  const on = node(cluster.nodes[0]!.url);
  try {
    const entries = await queryRows<{ value: string }>(on, `SELECT value FROM system.zookeeper WHERE path = '/clickhouse/task_queue/ddl'`);
    return entries.map((entry) => /^query: (.*)$/m.exec(entry.value)?.[1] ?? entry.value);
  } finally {
    await on.close();
  }
}
const alters = (queries: string[]) => queries.filter((query) => /^ALTER TABLE/.test(query));

async function onEachNode<T>(read: (on: ClickHouseClient) => Promise<T>): Promise<T[]> {
  return onEachNodeOf(cluster.nodes, read);
}

async function onEachNodeOf<T>(nodes: ClickHouseNode[], read: (on: ClickHouseClient) => Promise<T>): Promise<T[]> {
  return Promise.all(nodes.map(async (each) => {
    const on = node(each.url);
    try {
      return await read(on);
    } finally {
      await on.close();
    }
  }));
}

/** Merges stopped, so a row stored twice stays two rows in the local tables, or started again. */
const merges = (verb: 'STOP' | 'START', tables: string[], on = cluster.nodes) =>
  Promise.all(on.map(async (each) => {
    const client = node(each.url);
    try {
      for (const table of tables) await client.command({ query: `SYSTEM ${verb} MERGES ${DATABASE}.${table}_local` });
    } finally {
      await client.close();
    }
  }));

const publish = (session: string, kind: RowKind, rows: unknown[]) => js.publish(subjects.row(session, tenantOf({ product: 'tests', user: 'writer' }), kind), JSON.stringify(rows));
const video = (session: string, second: number) => ({ session, second, frames: 4, faces: 1, dropped: 0 });
const face = (session: string, second: number, track: number) => ({
  session, second, track, probabilities: [0.1, 0.4, 0.1, 0.1, 0.1, 0.1, 0.1], dominant: 'exaltation', frames: 4,
});

test.before(async () => {
  nats = await startNats({ dir: join(dir, 'nats'), port: await freePort(), maxFileStore: '1GB' });
  cluster = await startClickHouseCluster({ dir: join(dir, 'clickhouse'), name: 'emo', shards: 2, replicas: 2 });
  server = { url: cluster.urls.join(','), username: 'default', password: '', cluster: cluster.name };
  nodes = ClusterNodes.connect(server)!;
  nc = await connectBus('clickhouse-cluster test', nats.url, log);
  js = jetstream(nc);
  jsm = await jetstreamManager(nc);
});

test.after(async () => {
  if (failed) await reportNodes();
  await storage?.stop().catch(() => {});
  await client?.close();
  await nodes?.close();
  await nc?.drain();
  await cluster?.stop();
  await nats?.stop();
  if (!failed) rmSync(dir, { recursive: true, force: true });
});

/** After a failure: whether each node answers, and the last errors it logged. */
async function reportNodes(): Promise<void> {
  for (const each of cluster?.nodes ?? []) {
    const answers = await httpRequest(`${each.url}/ping`).then((reply) => reply.status === 200, () => false);
    let errors: string[] = [];
    try {
      errors = readFileSync(join(dir, 'clickhouse', each.name, 'server.err.log'), 'utf8').split('\n').filter((line) => /<(Error|Fatal)>/.test(line)).slice(-5);
    } catch {}
    console.log(`${each.name} (${each.url}) ${answers ? 'answers' : 'does not answer'}; its last errors:\n  ${errors.map((line) => line.slice(0, 300)).join('\n  ')}`);
  }
}

step('the schema is laid out on the cluster, by two services migrating at once', async () => {
  const started = Date.now();
  const reversed = { ...server, url: [...cluster.urls].reverse().join(',') };
  const first = connectClickHouse(server, null);
  const second = connectClickHouse(reversed, null);
  const [firstNodes, secondNodes] = [ClusterNodes.connect(server)!, ClusterNodes.connect(reversed)!];
  try {
    await Promise.all([migrate(first, DATABASE, firstNodes), migrate(second, DATABASE, secondNodes)]);
  } finally {
    await Promise.all([first.close(), second.close(), firstNodes.close(), secondNodes.close()]);
  }
  console.log(`  schema migrated on the cluster in ${Date.now() - started} ms`);
  // schema_migrations is one replicated table on every node: a node shows what the other
  // service recorded once it has fetched that insert from the replication log, a moment later.
  const recorded = () => onEachNode(async (on) => (await queryRows<{ id: number }>(on, 'SELECT DISTINCT id FROM schema_migrations')).length);
  await waitUntil('every node to fetch the recorded migrations', async () => (await recorded()).every((n) => n === MIGRATIONS.length), 30_000);
  const layouts = await onEachNode(async (on) => ({
    tables: await queryRows<{ name: string; engine: string }>(on, sql`SELECT name, engine FROM system.tables WHERE database = ${DATABASE} ORDER BY name`),
    migrations: (await queryRows<{ id: number }>(on, 'SELECT id FROM schema_migrations FINAL ORDER BY id')).map((row) => Number(row.id)),
  }));
  for (const { tables, migrations } of layouts) {
    const engines = Object.fromEntries(tables.map((table) => [table.name, table.engine]));
    assert.is(engines.audio_seconds, 'Distributed');
    assert.is(engines.audio_seconds_local, 'ReplicatedReplacingMergeTree');
    assert.is(engines.sessions_local, 'ReplicatedReplacingMergeTree');
    assert.is(engines.session_spans_local, 'ReplicatedAggregatingMergeTree');
    assert.is(engines.session_spans_feed, 'MaterializedView');
    assert.is(engines.event_spans_feed, 'MaterializedView');
    assert.is(engines.schema_migrations, 'ReplicatedReplacingMergeTree');
    assert.equal(migrations, MIGRATIONS.map((migration) => migration.id), 'every node knows which migrations ran');
  }
});

/** Adds a column to video_seconds as a migration does, through the nodes of `on`; how many of its tables each node has it in. */
async function addColumn(column: string, on: ClickHouseServer): Promise<number[]> {
  const schema = new Schema(DATABASE, cluster.name);
  const admin = connectClickHouse(on, DATABASE);
  const nodes = ClusterNodes.connect(on)!;
  try {
    for (const statement of schema.alter({ name: 'video_seconds', shardBy: 'cityHash64(session)' }, `ADD COLUMN ${column} UInt8`)) {
      await apply(admin, schema, nodes, statement);
    }
  } finally {
    await Promise.all([admin.close(), nodes.close()]);
  }
  return onEachNode((on) => count(on, sql`SELECT count() AS n FROM system.columns
    WHERE database = ${DATABASE} AND name = ${column} AND table IN ('video_seconds', 'video_seconds_local')`));
}

step('a column added by a migration reaches the local and the Distributed table on every node, through one replica of each shard', async () => {
  assert.equal(await addColumn('probe', server), [2, 2, 2, 2]);
  assert.equal(alters(await ddlQueue()), [], 'no ALTER went through the DDL queue');
});

step('a service that knows the nodes of one shard only adds a column ON CLUSTER, which reaches every node too', async () => {
  const firstShard = cluster.nodes.filter((each) => each.name.startsWith('clickhouse-1-')).map((each) => each.url);
  assert.equal(await addColumn('probe_on_cluster', { ...server, url: firstShard.join(',') }), [2, 2, 2, 2]);
  // Once, or again behind the first if a node was slow to run it (a DDL worker that stopped):
  // the statement that timed out is sent again (migrations.ts), and the column exists by then.
  assert.ok(alters(await ddlQueue()).length >= 1, String(alters(await ddlQueue())));
});

step('a node whose DDL worker stops is restarted, and ON CLUSTER DDL reaches it again', async () => {
  const victim = cluster.nodes[1]!;
  const before = victim.pid();
  // The line ClickHouse 18.16 logs as it ends the worker (ops/stack/ddl-worker-watch.ts).
  appendFileSync(join(dir, 'clickhouse', victim.name, 'server.err.log'),
    '2026.01.01 00:00:00.000000 [ 19 ] {} <Error> DDLWorker: Unexpected ZooKeeper error: Code: 999, Node exists. Terminating.\n');
  await waitUntil(`${victim.name} started again`, async () => ![undefined, before].includes(victim.pid()), 60_000);
  // A node just started holds its replicas read-only until its ZooKeeper session is up, and
  // refuses a replicated ALTER until then ("Cannot enqueue replicated DDL query").
  const readOnly = () => onEachNode((on) => count(on, 'SELECT count() AS n FROM system.replicas WHERE is_readonly'));
  await waitUntil('every replica writable', async () => (await readOnly()).every((n) => n === 0), 60_000);
  const firstShard = cluster.nodes.filter((each) => each.name.startsWith('clickhouse-1-')).map((each) => each.url);
  assert.equal(await addColumn('probe_after_restart', { ...server, url: firstShard.join(',') }), [2, 2, 2, 2]);
});

step('rows the storage writer stores are read back, each once, from every node', async () => {
  storage = await StorageService.start(await connectBus('clickhouse-cluster storage', nats.url, log), {
    id: `clickhouse-cluster-storage-${process.pid}`,
    clickhouse: server,
    database: DATABASE,
    writer: { batchRows: 5000, pullMaxBytes: config.writerPullMaxBytes, flushMs: 200 },
    connections: { reads: config.clickhouseReadConnections, writer: config.clickhouseWriterConnections, index: config.clickhouseIndexConnections },
    readsInFlightPerUser: config.storageReadsInFlightPerUser,
    rowsStreamMaxBytes: 64 * 1024 * 1024,
    natsReplicas: 1,
    sessionMaxSeconds: config.sessionMaxSeconds,
    sessionListMemoryPerUser: config.sessionListMemoryPerUser,
    sessionListMemoryTotal: config.sessionListMemoryTotal,
    purge: { windowSeconds: config.purgeWindowSeconds, batchSessions: config.purgeBatchSessions, queueMaxBytes: config.purgeQueueMaxBytes },
    sessionRecords: { bucketMaxBytes: config.sessionsBucketMaxBytes, maxAgeSeconds: config.sessionRecordMaxAgeSeconds, cacheBytes: config.sessionRecordCacheBytes },
  }, storageLog);
  client = connectClickHouse(server, DATABASE);
  // Sessions go to a shard by the hash of their random id: with 8, all on one shard was a 1 in
  // 128 chance (it happened in a CI run); with 24, 1 in 8 million.
  const SESSIONS = 24;
  const sessions = Array.from({ length: SESSIONS }, () => newSessionId());
  await merges('STOP', ['video_seconds', 'face_seconds']);
  for (const session of sessions) {
    await publish(session, 'video', Array.from({ length: 30 }, (_, second) => video(session, second)));
    await publish(session, 'face', Array.from({ length: 30 }, (_, second) => [face(session, second, 1), face(session, second, 2)]).flat());
    // Written twice, as a redelivered batch would be: counted once.
    await publish(session, 'video', Array.from({ length: 30 }, (_, second) => video(session, second)));
  }
  const inSessions = sql`has(${sessions}, session)`;
  await waitUntil('rows stored', async () => (await count(client, `SELECT count() AS n FROM face_seconds FINAL WHERE ${inSessions}`)) === SESSIONS * 60, 30_000);
  await waitUntil('rows replicated', async () => {
    const totals = await onEachNode((on) => count(on, `SELECT count() AS n FROM video_seconds FINAL WHERE ${inSessions}`));
    return totals.every((total) => total === SESSIONS * 30);
  }, 30_000);
  // Each shard holds whole sessions; the two replicas of a shard hold the same, once each has
  // fetched its parts (the reads above are answered by either replica of a shard).
  let local: number[] = [];
  await waitUntil('both replicas of each shard hold its rows', async () => {
    local = await onEachNode((on) => count(on, `SELECT uniqExact(session, second) AS n FROM video_seconds_local WHERE ${inSessions}`));
    return local[0] === local[1] && local[2] === local[3] && local[0]! + local[2]! === SESSIONS * 30;
  }, 30_000).catch(() => undefined);
  assert.is(local[0], local[1]);
  assert.is(local[2], local[3]);
  assert.is(local[0]! + local[2]!, SESSIONS * 30, 'every row in exactly one shard');
  assert.ok(local[0]! > 0 && local[2]! > 0, `both shards hold sessions: rows per node ${local.join(', ')}`);
  // With merges stopped every copy stays a row of the local tables: the video rows written twice
  // show twice on every node (once both replicas have every part), the face rows, written once,
  // once; FINAL above read each once.
  const copies = (table: string, key: string) => onEachNode(async (on) => {
    const [row] = await queryRows<{ rows: number; keys: number }>(on, `SELECT count() AS rows, uniqExact(${key}) AS keys FROM ${table}_local WHERE ${inSessions}`);
    return Number(row!.rows) / Number(row!.keys);
  });
  await waitUntil('every copy of the video rows on both replicas', async () => (await copies('video_seconds', 'session, second')).every((n) => n === 2), 30_000)
    .catch(async (error: Error) => assert.unreachable(`${error.message}: rows per key on each node ${await copies('video_seconds', 'session, second')}`));
  // A replica fetches each table's parts on its own: the face rows may reach one a moment after
  // its video rows (0 rows there read as NaN), but never twice.
  let faceCopies: number[] = [];
  await waitUntil('every face row on both replicas', async () => (faceCopies = await copies('face_seconds', 'session, second, track')).every((n) => n === 1), 30_000)
    .catch(() => undefined);
  assert.equal(faceCopies, [1, 1, 1, 1], 'the face rows, written once, stored once');
  await merges('START', ['video_seconds', 'face_seconds']);

  const timeline = await emotionsTimeline(client, { session: sessions[0]!, granularity: 10, start: 0, end: 30 });
  assert.equal(timeline.map((entry) => [entry.start, entry.detectedFaces, entry.emotions.exaltation!.quantity]), [[0, 2, 1], [10, 2, 1], [20, 2, 1]]);
});

step('a session list and its spans read through the Distributed tables', async () => {
  const user = `user-${process.pid}`;
  const base = Date.now() - 100_000;
  const ids: string[] = [];
  const rows = [];
  for (let i = 0; i < 25; i++) {
    const created = base + i * 1000;
    const id = newSessionId(created);
    ids.push(id);
    rows.push({ id, user, product: 'tests', name: `s${i}`, type: 'live', state: 'finished', created_ms: created, created: Math.floor(created / 1000), revision: 1, doc: JSON.stringify({ id }) });
  }
  // Each row twice in one block, as the index follower stores a change redelivered after its
  // insert (a second identical block would be dropped by the replicas' insert deduplication).
  await client.insert({ table: 'sessions', values: [...rows, ...rows], format: 'JSONEachRow' });
  await merges('STOP', ['custom_events']);
  const events = Array.from({ length: 12 }, (_, n) => ({ id: `e${n}`, session: ids[0]!, source: 'sensor', user, type: 'sensor_report', time: n, data: n }));
  // Each event twice in one block: a second block identical to the first would be dropped by
  // the replicas' insert deduplication before any view saw it.
  await publish(ids[0]!, 'event', [...events, ...events]);
  // A list reads both the index and the spans its materialized view keeps; a CI run once
  // found the second behind the first a moment after the rows arrived through the row stream.
  const indexed = () => count(client, sql`SELECT uniqExact(id) AS n FROM sessions WHERE user = ${user}`);
  const spans = () => count(client, sql`SELECT uniqMerge(rows) AS n FROM session_spans WHERE user = ${user}`);
  const eventRows = () => count(client, sql`SELECT count() AS n FROM custom_events WHERE session = ${ids[0]!}`);
  const eventSpans = () => count(client, sql`SELECT uniqMerge(rows) AS n FROM event_spans WHERE session = ${ids[0]!}`);
  await waitUntil('sessions indexed, and their spans', async () => (await indexed()) === 25 && (await spans()) >= 25, 30_000);
  // The same for the events' spans: a CI run read 24 event rows and no span yet.
  await waitUntil('events stored twice, and their spans', async () => (await eventRows()) === 24 && (await eventSpans()) >= 12, 30_000)
    .catch(async (error: Error) => assert.unreachable(`${error.message}: ${await eventRows()} rows, ${await eventSpans()} in spans`));
  const page = await listSessions(client, { user, limit: 10, offset: 10, activeSinceMs: 0 });
  assert.equal(page.records.map((record) => record.id), [...ids].reverse().slice(10, 20));
  assert.ok(page.hasMore);
  assert.is(await spans(), 25, 'the materialized view counted each session once, though written twice');
  assert.is(await eventSpans(), 12, 'and each event once');
  await merges('START', ['custom_events']);
});

step('a storage service reads back at once what it wrote through a first replica, before the other replica has fetched it', async () => {
  // Replication lag held open: no replica fetches what another was given.
  const fetches = (verb: 'STOP' | 'START') => onEachNode((on) => on.command({ query: `SYSTEM ${verb} FETCHES ${DATABASE}.video_seconds_local` }));
  const sessions = Array.from({ length: 8 }, () => newSessionId());
  const inSessions = sql`has(${sessions}, session)`;
  await fetches('STOP');
  try {
    const first = connectClickHouse({ ...server, url: cluster.urls[0]! }, DATABASE);
    try {
      await first.insert({ table: 'video_seconds', values: sessions.map((session) => columnsOf('video', video(session, 0))), format: 'JSONEachRow' });
      const copies = await onEachNode((on) => count(on, `SELECT count() AS n FROM video_seconds_local WHERE ${inSessions}`));
      assert.is(copies.reduce((sum, n) => sum + n, 0), 8, `each row on one replica only: ${JSON.stringify(copies)}`);
      assert.is(await count(first, `SELECT count() AS n FROM video_seconds WHERE ${inSessions}`), 8, 'read through the node written to');
    } finally {
      await first.close();
    }
  } finally {
    await fetches('START');
  }
  // Another node reads the replicas it has failed to reach least often lately (clickhouse.ts):
  // it sees every row once its partner has fetched them.
  await waitUntil('the rows fetched by every replica', async () =>
    (await onEachNode((on) => count(on, `SELECT count() AS n FROM video_seconds WHERE ${inSessions}`))).every((n) => n === 8), 30_000);
});

step('kill -9 of the node the storage service talks to: writes and reads carry on, no row lost or doubled', async () => {
  const victim = cluster.nodes[0]!;
  // Merges stopped on every node but the victim, so a row stored twice stays two rows there
  // (stopped on a node across its restart, they left its replication queue waiting for them).
  const kept = cluster.nodes.filter((each) => each !== victim);
  await merges('STOP', ['video_seconds'], kept);
  try {
    await killTheNodeTalkedTo(victim, kept);
  } finally {
    await merges('START', ['video_seconds'], kept);
  }
});

async function killTheNodeTalkedTo(victim: ClickHouseNode, kept: ClickHouseNode[]): Promise<void> {
  const sessions = Array.from({ length: 4 }, () => newSessionId());
  const published = new Map(sessions.map((session) => [session, 0]));
  const stored = (session: string) => count(client, sql`SELECT count() AS n FROM video_seconds FINAL WHERE session = ${session}`);
  const progress = async () => `published ${JSON.stringify([...published.values()])}, stored ${JSON.stringify(await Promise.all(sessions.map(stored)))}`;
  let writing = true;
  // 40 rows a second, each session's seconds in order, each publish acknowledged by NATS.
  const writer = (async () => {
    while (writing) {
      for (const session of sessions) {
        const second = published.get(session)!;
        await publish(session, 'video', [video(session, second)]);
        published.set(session, second + 1);
      }
      await sleep(100);
    }
  })();
  const reads = { ok: 0, failed: 0, slowestMs: 0, errors: [] as string[] };
  let reading = true;
  const reader = (async () => {
    while (reading) {
      const started = Date.now();
      try {
        await count(client, sql`SELECT count() AS n FROM video_seconds FINAL WHERE session = ${sessions[0]!}`);
        reads.ok++;
      } catch (error) {
        reads.failed++;
        reads.errors.push(`${Date.now() - started} ms: ${(error as Error).message}`.slice(0, 300));
      }
      reads.slowestMs = Math.max(reads.slowestMs, Date.now() - started);
      await sleep(100);
    }
  })();
  let failoverMs: number;
  try {
    await waitUntil('rows flowing', async () => (await stored(sessions[0]!)) >= 10, 20_000);
    await victim.kill();
    const killedAt = Date.now();
    const afterKill = published.get(sessions[0]!)! + 1;
    await waitUntil('a row published after the kill stored', async () => (await stored(sessions[0]!)) >= afterKill, 30_000)
      .catch(async (error: Error) => assert.unreachable(`${error.message}: ${await progress()}`));
    failoverMs = Date.now() - killedAt;
    await sleep(3000);
  } finally {
    // Whatever failed, nothing of this test goes on into the next.
    writing = false;
    reading = false;
    await Promise.allSettled([writer, reader]);
  }
  // A publish the bus refused fails the test.
  await writer;
  assert.is(reads.failed, 0, `every read answered; ${reads.errors.join('; ')}`);
  // A part the victim committed as it died, before its partner fetched it, is on the victim's
  // disk alone (ClickHouse replicates a part after its insert commits): its rows are read again
  // once the victim is back, not lost. How many waited for it is reported.
  const allStored = async () => (await Promise.all(sessions.map(stored))).every((n, i) => n === published.get(sessions[i]!));
  await waitUntil('every published row stored while the node is down', allStored, 10_000).catch(() => undefined);
  const publishedRows = [...published.values()].reduce((sum, n) => sum + n, 0);
  const waitedForVictim = publishedRows - (await Promise.all(sessions.map(stored))).reduce((sum, n) => sum + n, 0);

  const restartedAt = Date.now();
  await victim.start();
  const partner = cluster.nodes.find((each) => each.shard === victim.shard && each !== victim)!;
  // Each key once: the victim merges what its partner keeps apart.
  const local = (url: string) => {
    const on = node(url);
    return count(on, 'SELECT uniqExact(session, second) AS n FROM video_seconds_local').finally(() => on.close());
  };
  await waitUntil('the restarted replica to catch up', async () => {
    const [mine, theirs] = await Promise.all([local(victim.url), local(partner.url)]);
    return mine === theirs;
  }, 60_000);
  const catchUpMs = Date.now() - restartedAt;
  // Its rows are back; merges of the parts it fetched may still be queued for a moment.
  const on = node(victim.url);
  let replicas: Array<[number, number]> = [];
  await waitUntil('the restarted replica active, its replication queue empty', async () => {
    const rows = await queryRows<{ active: number; queue: number }>(on, sql`SELECT active_replicas AS active, queue_size AS queue
      FROM system.replicas WHERE database = ${DATABASE} AND table = 'video_seconds_local'`);
    replicas = rows.map((row) => [Number(row.active), Number(row.queue)]);
    return replicas.length === 1 && replicas[0]![0] === 2 && replicas[0]![1] === 0;
  }, 30_000).catch((error: Error) => assert.unreachable(`${error.message}: [active, queue] ${JSON.stringify(replicas)}`));
  await on.close();
  await waitUntil('every published row stored', allStored, 30_000).catch(async (error: Error) => assert.unreachable(`${error.message}: ${await progress()}`));
  for (const session of sessions) {
    const [row] = await queryRows<{ rows: number; seconds: number; last: number }>(client,
      sql`SELECT count() AS rows, uniqExact(second) AS seconds, max(second) AS last FROM video_seconds FINAL WHERE session = ${session}`);
    const expected = published.get(session)!;
    assert.equal([Number(row!.rows), Number(row!.seconds), Number(row!.last)], [expected, expected, expected - 1], `session ${session}: each second once`);
  }
  // Without FINAL, on the nodes whose merges stayed stopped, once each has fetched every part
  // of its shard: each session's rows on one shard, every second once.
  const held = () => onEachNodeOf(kept, async (on) => Object.fromEntries((await queryRows<{ session: string; rows: number; seconds: number }>(on,
    sql`SELECT session, count() AS rows, uniqExact(second) AS seconds FROM video_seconds_local WHERE has(${sessions}, session) GROUP BY session`))
    .map((row) => [row.session, [Number(row.rows), Number(row.seconds)]])));
  let copies: Record<string, number[]>[] = [];
  const holders = (session: string) => kept.filter((_, i) => copies[i]![session]);
  const shardsOf = (session: string) => new Set(holders(session).map((each) => each.shard));
  await waitUntil('every kept node holding every second of its shard', async () => {
    copies = await held();
    return sessions.every((session) => shardsOf(session).size > 0 &&
      kept.filter((each) => shardsOf(session).has(each.shard)).every((each) => copies[kept.indexOf(each)]![session]?.[1] === published.get(session)));
  }, 30_000).catch((error: Error) => assert.unreachable(`${error.message}: [rows, seconds] by session on ${kept.map((each) => each.name)}: ${JSON.stringify(copies)}`));
  for (const session of sessions) {
    assert.is(shardsOf(session).size, 1, `session ${session} on one shard: ${holders(session).map((each) => each.name)}`);
    for (const holder of holders(session)) {
      const expected = published.get(session)!;
      assert.equal(copies[kept.indexOf(holder)]![session], [expected, expected], `session ${session} on ${holder.name}, without FINAL: each second once`);
    }
  }
  const rowsWithoutFinal = copies.flatMap((onNode) => Object.values(onNode).map(([rows]) => rows!)).reduce((sum, n) => sum + n, 0);
  console.log(`  ${victim.name} killed: rows stored again ${failoverMs} ms after, reads ${reads.ok} answered, 0 failed, slowest ${reads.slowestMs} ms;` +
    ` restarted, caught up in ${catchUpMs} ms; ${waitedForVictim} of ${publishedRows} rows readable only once it was back;` +
    ` without FINAL, ${rowsWithoutFinal} rows on ${kept.map((each) => each.name).join(', ')} (each session's on every one of its shard), none twice`);
}

step('a session is purged from every shard and replica, also with a node down', async () => {
  // From a whole cluster, even if the test before failed with its node down.
  await Promise.all(cluster.nodes.map((each) => each.start()));
  const [session, patient] = [newSessionId(), newSessionId()];
  for (const id of [session, patient]) {
    await publish(id, 'video', Array.from({ length: 20 }, (_, second) => video(id, second)));
    await waitUntil('rows stored', async () => (await count(client, sql`SELECT count() AS n FROM video_seconds FINAL WHERE session = ${id}`)) === 20, 30_000);
  }
  const down = cluster.nodes[3]!;
  await down.kill();
  const record = (id: string) => ({ id, createdAt: parseInt(id.slice(0, 8), 16) * 1000, finishedAt: Date.now() - 5000 }) as SessionRecord;
  let started = Date.now();
  let refused = 0;
  // As a client would: a 503 (rows still being deleted) is asked again.
  for (;;) {
    try {
      await purgeSession(client, jsm, record(session), Date.now() + 5000, new Schema(DATABASE, cluster.name), nodes);
      break;
    } catch (error) {
      assert.is((error as { status?: number }).status, 503, String(error));
      assert.ok(++refused < 10, 'purged within ten tries');
    }
  }
  console.log(`  purged with ${down.name} down in ${Date.now() - started} ms (${refused} answered 503 first)`);
  assert.is(await count(client, sql`SELECT count() AS n FROM video_seconds WHERE session = ${session}`), 0);
  // The deletions went to the lost node's partner, not through the DDL queue: it runs them,
  // and so does the lost node once back.
  assert.equal(alters(await ddlQueue()).filter((query) => query.includes('DELETE')), [], 'no deletion went through the DDL queue');
  started = Date.now();
  await purgeSession(client, jsm, record(patient), Date.now() + 60_000, new Schema(DATABASE, cluster.name), nodes);
  console.log(`  purged in one call with 60 s to spare and ${down.name} down in ${Date.now() - started} ms`);
  assert.is(await count(client, sql`SELECT count() AS n FROM video_seconds WHERE session = ${patient}`), 0);
  await down.start();
  const on = node(down.url);
  try {
    await waitUntil('the purge to reach the node that was down', async () =>
      (await count(on, sql`SELECT count() AS n FROM video_seconds_local WHERE session = ${session}`)) === 0, 60_000);
  } finally {
    await on.close();
  }
});

step('a session is purged while a node stalls: its partner takes the deletion, and the stalled node once it runs again', async () => {
  await Promise.all(cluster.nodes.map((each) => each.start()));
  const stalled = cluster.nodes[3]!;
  const sessions = Array.from({ length: 8 }, () => newSessionId());
  for (const session of sessions) await publish(session, 'video', Array.from({ length: 20 }, (_, second) => video(session, second)));
  await waitUntil('rows stored', async () => (await count(client, sql`SELECT count() AS n FROM video_seconds FINAL WHERE has(${sessions}, session)`)) === 8 * 20, 30_000);
  const on = node(stalled.url);
  try {
    // A session of the stalled node's shard (one in 256 of eight sessions has none there).
    let session: string | undefined;
    await waitUntil('the stalled node to hold a session of its shard', async () => {
      [session] = (await queryRows<{ session: string }>(on, sql`SELECT DISTINCT session FROM video_seconds_local WHERE has(${sessions}, session)`)).map((row) => row.session);
      return session !== undefined;
    }, 30_000);
    const record = { id: session!, createdAt: parseInt(session!.slice(0, 8), 16) * 1000, finishedAt: Date.now() - 5000 } as SessionRecord;
    const pid = stalled.pid()!;
    process.kill(pid, 'SIGSTOP');
    const started = Date.now();
    try {
      await purgeSession(client, jsm, record, Date.now() + 20_000, new Schema(DATABASE, cluster.name), nodes);
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    console.log(`  purged with ${stalled.name} stopped in ${Date.now() - started} ms`);
    assert.is(await count(client, sql`SELECT count() AS n FROM video_seconds WHERE session = ${session!}`), 0);
    await waitUntil('the stalled node to delete them too', async () =>
      (await count(on, sql`SELECT count() AS n FROM video_seconds_local WHERE session = ${session!}`)) === 0, 60_000);
  } finally {
    await on.close();
  }
});

step('a node that crashes is started again by the stack and catches up with its replica', async () => {
  await Promise.all(cluster.nodes.map((each) => each.start()));
  const crashing = cluster.nodes[2]!;
  const partner = cluster.nodes.find((each) => each.shard === crashing.shard && each !== crashing)!;
  const pid = crashing.pid()!;
  const sessions = Array.from({ length: 8 }, () => newSessionId());
  const started = Date.now();
  // What a fault does: ClickHouse logs its stack and dies of the signal.
  process.kill(pid, 'SIGSEGV');
  // Written while it goes down (its partner takes them): it must fetch them once back.
  for (const session of sessions) await publish(session, 'video', Array.from({ length: 20 }, (_, second) => video(session, second)));
  await waitUntil('rows stored', async () => (await count(client, sql`SELECT count() AS n FROM video_seconds FINAL WHERE has(${sessions}, session)`)) === 8 * 20, 30_000);
  await waitUntil('the crashed node to run again', async () => ![undefined, pid].includes(crashing.pid()), 60_000);
  const [on, other] = [node(crashing.url), node(partner.url)];
  const local = (through: ClickHouseClient) => count(through, 'SELECT count() AS n FROM video_seconds_local');
  try {
    await waitUntil('the crashed node to answer and catch up', async () => (await local(on)) === (await local(other)), 60_000);
    // Its replicas stay read-only until its old ZooKeeper session lapses and each takes its
    // replica back; until then it runs no ON CLUSTER DDL either.
    await waitUntil('the crashed node to take its replicas back', async () =>
      (await count(on, 'SELECT count() AS n FROM system.replicas WHERE is_readonly')) === 0, 60_000);
  } finally {
    await Promise.all([on.close(), other.close()]);
  }
  console.log(`  ${crashing.name} crashed (SIGSEGV): running and caught up again after ${Date.now() - started} ms`);
});

step('a node slow to run DDL holds a migration until it has, and the statement never goes to another server', async () => {
  await Promise.all(cluster.nodes.map((each) => each.start()));
  const slow = cluster.nodes[3]!;
  const database = 'emotions_cluster_slow';
  // Past the server's wait for the nodes (DDL_WAIT_SECONDS) and the client's request timeout.
  const stalledMs = 35_000;
  const warnings: string[] = [];
  const admin = connectClickHouse(server, null, pino({ level: 'warn' }, { write: (line: string) => void warnings.push(line) }));
  const pid = slow.pid()!;
  process.kill(pid, 'SIGSTOP');
  let resumedAt = Infinity;
  try {
    const migrated = migrate(admin, database, nodes).then(() => Date.now());
    await Promise.race([migrated, sleep(stalledMs)]);
    resumedAt = Date.now();
    process.kill(pid, 'SIGCONT');
    const migratedAt = await migrated;
    console.log(`  ${slow.name} stopped for ${stalledMs} ms: schema migrated ${migratedAt - resumedAt} ms after it resumed`);
    assert.ok(migratedAt > resumedAt, 'the migration waited for the stopped node');
  } finally {
    if (resumedAt === Infinity) process.kill(pid, 'SIGCONT');
    await admin.close();
  }
  assert.equal(warnings, [], 'no request moved to another server');
  const tables = await onEachNode((on) => count(on, sql`SELECT count() AS n FROM system.columns
    WHERE database = ${database} AND name = 'speech_end' AND table IN ('audio_seconds', 'audio_seconds_local')`));
  assert.equal(tables, [2, 2, 2, 2], 'every node has the column of the last migration');
});

test.run();

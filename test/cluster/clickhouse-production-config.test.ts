// The production ClickHouse cluster files (ops/production/clickhouse/) run as shipped, on this
// machine's loopback (test/support/production-clickhouse.ts changes only host names, ports and
// data folders): zoo.cfg's three-member ZooKeeper ensemble, and all four nodes (2 shards x 2
// replicas) on Debian's config.xml and users.xml with every config.d file, users.d and each
// one's macros. A storage service, connected as the shipped `emo` user, migrates the schema
// (replicated local tables and Distributed tables ON CLUSTER, through the shipped DDL queue),
// stores rows published on ROWS on both replicas of their shard, kills an abandoned read, and
// purges deleted sessions with mutations that reach every replica. `analyst` reads and writes
// nothing; the nodes ask each other as `cluster`.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { readConfig } from '../../bus/config.ts';
import { connectBus } from '../../bus/connection.ts';
import type { SessionRecord } from '../../bus/contracts/session.ts';
import { newSessionId } from '../../bus/ids.ts';
import { createLog } from '../../bus/log.ts';
import { call } from '../../bus/rpc.ts';
import { SessionRecords } from '../../bus/session-records.ts';
import { consumers, streams, subjects, tenantOf } from '../../bus/subjects.ts';
import { startNats } from '../../ops/stack/nats.ts';
import { freePort } from '../../ops/stack/ports.ts';
import { waitUntil, type Service } from '../../ops/stack/process.ts';
import { launchService } from '../../ops/stack/service-process.ts';
import { ask } from '../../ops/stack/zookeeper.ts';
import { connectClickHouse, queryRows, type ClickHouseClient } from '../../storage/clickhouse/clickhouse.ts';
import { MIGRATIONS } from '../../storage/schema/migrations.ts';
import { readsUntil } from '../../storage/clickhouse/read-deadline.ts';
import { READS } from '../../storage/clickhouse/reads-in-flight.ts';
import { Shards } from '../../storage/results/shards.ts';
import { literal, sql } from '../../storage/clickhouse/sql.ts';
import { PASSWORDS, runAs, startProductionNodes, startProductionZooKeeper, type ProductionNode } from '../support/production-clickhouse.ts';
import { audioRow } from '../support/audio-row.ts';

const config = readConfig();
const log = createLog({ logLevel: 'silent', hostId: 'clickhouse-production-config' });
const dir = join(config.varDir, 'test', `clickhouse-production-${process.pid}`);
const DATABASE = 'emotions';
const CLUSTER = 'emo';
const SECONDS = 20;
const OWNER = { product: 'tests', user: 'production-config' };

const running: Service[] = [];
const zookeeperPorts: number[] = [];
let nodes: ProductionNode[] = [];
let nc: NatsConnection | undefined;
let js: JetStreamClient;
let jsm: JetStreamManager;
let records: SessionRecords | undefined;
let emo: ClickHouseClient | undefined;
// A session on each shard, its record in the sessions bucket and its rows stored.
const sessions = new Map<number, SessionRecord>();
let failed = false;

test.after(async () => {
  records?.close();
  await nc?.close();
  await emo?.close();
  // The storage service first: it would log every node it lost.
  for (const each of running.reverse()) await each.stop();
  if (!failed) rmSync(dir, { recursive: true, force: true });
});

// Each step needs the ones before; a failed one keeps the servers' folders to read.
const step = (name: string, run: () => Promise<void>) =>
  test(name, () => run().catch((error: unknown) => {
    failed = true;
    throw error;
  }));

const service = { username: 'emo', password: PASSWORDS.CLICKHOUSE_SERVICE_PASSWORD };
/** One node's own tables, as `emo`. */
const onNode = async <T>(node: ProductionNode, query: string): Promise<T[]> => {
  const direct = connectClickHouse({ url: node.url, ...service }, null);
  try {
    return await queryRows<T>(direct, query);
  } finally {
    await direct.close();
  }
};
const count = async (node: ProductionNode, query: string) => Number((await onNode<{ n: number }>(node, query))[0]?.n);
/** A node's logged queries that match: none before its first, when it has no query_log yet. */
const logged = async <T>(node: ProductionNode, columns: string, where: string): Promise<T[]> =>
  (await count(node, "SELECT count() AS n FROM system.tables WHERE database = 'system' AND name = 'query_log'"))
    ? onNode<T>(node, `SELECT ${columns} FROM system.query_log WHERE ${where}`)
    : [];
const analyst = (query: string) => runAs(nodes[0]!.url, 'analyst', PASSWORDS.CLICKHOUSE_ANALYST_PASSWORD, query);
const flushLogs = () => Promise.all(nodes.map((node) => runAs(node.url, 'emo', PASSWORDS.CLICKHOUSE_SERVICE_PASSWORD, 'SYSTEM FLUSH LOGS')));

step('zoo.cfg makes a three-member ensemble', async () => {
  const members = await startProductionZooKeeper(dir);
  running.push(...members);
  const modes = await Promise.all(members.map(async (member) => /Mode: (\w+)/.exec(await ask(member.port, 'srvr'))?.[1]));
  assert.equal(modes.sort(), ['follower', 'follower', 'leader']);
  zookeeperPorts.push(...members.map((member) => member.port));
});

step('four clickhouse-servers start on the config.d files, users.d and their macros, and show the cluster', async () => {
  assert.is(zookeeperPorts.length, 3, 'the ensemble runs');
  nodes = await startProductionNodes(dir, zookeeperPorts);
  running.push(...nodes.map((node) => node.server));
  for (const node of nodes) {
    const clusters = await onNode<{ shard: number; replica: number }>(node,
      `SELECT shard_num AS shard, replica_num AS replica FROM system.clusters WHERE cluster = 'emo' ORDER BY shard, replica`);
    assert.equal(clusters.map((row) => [Number(row.shard), Number(row.replica)]), [[1, 1], [1, 2], [2, 1], [2, 2]]);
    const macros = await onNode<{ macro: string; substitution: string }>(node, 'SELECT macro, substitution FROM system.macros ORDER BY macro');
    assert.equal(macros.map((row) => `${row.macro}=${row.substitution}`), [`replica=${node.name}`, `shard=${node.shard}`]);
    const znodes = await onNode<{ name: string }>(node, `SELECT name FROM system.zookeeper WHERE path = '/'`);
    assert.ok(znodes.some((row) => row.name === 'zookeeper'), `${node.name} reaches the ensemble`);
  }
});

step('a storage service as `emo` migrates: replicated local tables and Distributed tables on every node, ON CLUSTER through the shipped queue', async () => {
  assert.is(nodes.length, 4, 'the four nodes run');
  const nats = await startNats({ dir: join(dir, 'nats'), port: await freePort() });
  running.push(nats);
  // Replies under the host's inbox prefix: the test asks storage to purge as a deleting host does.
  nc = await connectBus('clickhouse-production-config test', nats.url, log, { user: 'host' });
  js = jetstream(nc);
  jsm = await jetstreamManager(nc);
  // As DEPLOYMENT.md's common.env has it: every node, the first replica of each shard first.
  const byName = (name: string) => nodes.find((node) => node.name === name)!.url;
  const urls = ['ch-1-1', 'ch-2-1', 'ch-1-2', 'ch-2-2'].map(byName).join(',');
  running.push(await launchService({
    id: `production-storage-${process.pid}`,
    role: 'storage',
    projectRoot: config.projectRoot,
    logFile: join(dir, 'storage.log'),
    metricsPort: await freePort(),
    env: {
      ...process.env,
      NATS_URL: nats.url,
      CLICKHOUSE_URL: urls,
      CLICKHOUSE_USER: 'emo',
      CLICKHOUSE_PASSWORD: PASSWORDS.CLICKHOUSE_SERVICE_PASSWORD,
      CLICKHOUSE_CLUSTER: CLUSTER,
      CLICKHOUSE_DATABASE: DATABASE,
      PURGE_WINDOW_SECONDS: '1',
      // ROWS, DEAD_ROWS and the buckets must fit this NATS's file store beside the other lanes'.
      ROWS_STREAM_MAX_BYTES: String(256 * 1024 ** 2),
      SESSIONS_BUCKET_MAX_BYTES: String(64 * 1024 ** 2),
    },
  }));
  emo = connectClickHouse({ url: urls, ...service, cluster: CLUSTER }, DATABASE);

  for (const node of nodes) {
    const tables = await onNode<{ name: string; engine: string }>(node,
      sql`SELECT name, engine FROM system.tables WHERE database = ${DATABASE} AND (name LIKE 'audio_seconds%' OR name LIKE 'sessions%') ORDER BY name`);
    assert.equal(tables.map((row) => `${row.name} ${row.engine}`), [
      'audio_seconds Distributed', 'audio_seconds_local ReplicatedReplacingMergeTree', 'sessions Distributed', 'sessions_local ReplicatedReplacingMergeTree',
    ], `${node.name}'s tables`);
    const [replica] = await onNode<{ path: string; name: string; active: number }>(node, sql`SELECT zookeeper_path AS path, replica_name AS name,
      active_replicas AS active FROM system.replicas WHERE database = ${DATABASE} AND table = 'audio_seconds_local'`);
    assert.equal({ ...replica, active: Number(replica?.active) }, { path: `/clickhouse/tables/${node.shard}/${DATABASE}/audio_seconds`, name: node.name, active: 2 },
      `${node.name} is a replica of shard ${node.shard}, its partner active`);
    const applied = await onNode<{ id: number }>(node, `SELECT id FROM ${DATABASE}.schema_migrations ORDER BY id`);
    assert.equal(applied.map((row) => Number(row.id)), MIGRATIONS.map((migration) => migration.id), `${node.name} holds every migration applied`);
  }
  const ddl = await count(nodes[0]!, `SELECT count() AS n FROM system.zookeeper WHERE path = '/clickhouse/task_queue/ddl'`);
  assert.ok(ddl > 0, 'the ON CLUSTER statements went through distributed-ddl.xml\'s queue');
});


step('rows published on ROWS are stored through the Distributed tables on both replicas of their shard, and nowhere else', async () => {
  assert.ok(emo, 'the storage service runs');
  records = await SessionRecords.open(js, log, 1);
  const shards = new Shards(emo!, CLUSTER);
  const createdAt = Date.now() - 600_000;
  while (sessions.size < 2) {
    const id = newSessionId(createdAt);
    const shard = (await shards.of([id])).get(id)!;
    if (sessions.has(shard)) continue;
    const record: SessionRecord = {
      id, name: `on shard ${shard}`, type: 'live_analysis', state: 'finished', createdAt, finishedAt: createdAt + SECONDS * 1000, stopReason: 'client',
      ...OWNER, streamUri: 'rtmp://127.0.0.1:9/live/production', sensors: [], expiresAt: createdAt + 3_600_000, healthCheckAt: createdAt + SECONDS * 1000,
      workerState: 'stopped', mediaSeconds: SECONDS,
    };
    await records.create(record);
    sessions.set(shard, record);
  }
  for (const { id } of sessions.values()) {
    const rows = Array.from({ length: SECONDS }, (_, second) => audioRow(id, second));
    await js.publish(subjects.row(id, tenantOf(OWNER), 'audio'), JSON.stringify(rows));
  }
  await waitUntil('every row acknowledged', async () => {
    const { num_pending, num_ack_pending } = await jsm.consumers.info(streams.rows, consumers.writer);
    return num_pending === 0 && num_ack_pending === 0;
  }, 60_000);

  const held = async (node: ProductionNode, session: string) =>
    count(node, `SELECT count() AS n FROM ${DATABASE}.audio_seconds_local WHERE ${sql`session = ${session}`}`);
  for (const [shard, { id }] of sessions) {
    for (const node of nodes) {
      const expected = node.shard === shard ? SECONDS : 0;
      // A replica fetches its partner's part a moment after the insert returned.
      await waitUntil(`${node.name} holding ${expected} rows of the session on shard ${shard}`, async () => (await held(node, id)) === expected, 30_000);
    }
  }
  // The index, sharded by user, is written by the storage service's follower of the bucket.
  await waitUntil('both sessions in the index', async () =>
    Number((await queryRows<{ n: number }>(emo!, sql`SELECT count() AS n FROM sessions WHERE user = ${OWNER.user}`))[0]?.n) === 2, 30_000);
});

step('an analyst reads both shards and writes nothing; the other shard answers as `cluster`', async () => {
  assert.is(sessions.size, 2, 'rows are stored');
  const read = await analyst(`SELECT count() FROM ${DATABASE}.audio_seconds`);
  assert.is(read.status, 200, read.text);
  assert.is(read.text, String(2 * SECONDS), 'the rows of both shards');

  const write = await analyst(`INSERT INTO ${DATABASE}.audio_seconds (session, second) VALUES ('intruder', 1)`);
  assert.is(write.status, 500, write.text);
  assert.match(write.text, /readonly/i);
  const setting = await analyst('SET max_memory_usage = 0');
  assert.match(setting.text, /readonly/i, 'a limit cannot be lifted');
  assert.is((await runAs(nodes[0]!.url, 'analyst', 'wrong', 'SELECT 1')).status, 401, 'a wrong password is refused');
  assert.is(Number((await queryRows<{ n: number }>(emo!, 'SELECT count() AS n FROM audio_seconds'))[0]?.n), 2 * SECONDS, 'the refused write changed nothing');

  // Shard 1's part ran on the node asked, shard 2's on one of its replicas, as `cluster`, for the analyst.
  await flushLogs();
  const remote = (await Promise.all(nodes.filter((node) => node.shard === 2).map((node) => logged<{ user: string; initial: string }>(node,
    'user, initial_user AS initial', "type = 2 AND is_initial_query = 0 AND initial_user = 'analyst' AND query LIKE '%audio_seconds_local%'")))).flat();
  assert.equal(remote, [{ user: 'cluster', initial: 'analyst' }]);
});

step('the storage service\'s read deadline kills a read running on both shards as `emo`', async () => {
  assert.is(sessions.size, 2, 'rows are stored');
  const marker = `abandoned-${process.pid}`;
  // A read that outlasts its deadline on every shard: ClickHouse sleeps at each of its rows (3 s a
  // shard), checking for a kill between them. Its own limit, the deadline rounded up to whole
  // seconds, falls a second after the kill.
  const started = Date.now();
  const failure = await readsUntil(emo!, started + 1050, READS).query({
    query: sql`SELECT count() AS n FROM audio_seconds WHERE session != ${marker} AND NOT ignore(sleepEachRow(0.15))`,
    format: 'JSONEachRow',
    clickhouse_settings: { log_queries: 1, max_block_size: '1' },
  }).then(() => undefined, (error: unknown) => error as { status?: number });
  assert.is(failure?.status, 503, 'the caller is told its read came too late');

  const runningOn = async (node: ProductionNode) => count(node, `SELECT count() AS n FROM system.processes WHERE position(query, ${literal(marker)}) > 0
    AND position(query, 'system.processes') = 0`);
  await waitUntil('no part of the read running on any node', async () => (await Promise.all(nodes.map(runningOn))).every((n) => n === 0), 10_000);
  await flushLogs();
  const ended = (await Promise.all(nodes.map((node) => logged<{ user: string; initial: number; exception: string }>(node,
    'user, is_initial_query AS initial, exception',
    `type >= 2 AND position(query, ${literal(marker)}) > 0 AND position(query, 'system.query_log') = 0`)
    .then((rows) => rows.map((row) => ({ ...row, node: node.name, shard: node.shard })))))).flat();
  const initial = ended.filter((row) => Number(row.initial) === 1);
  const parts = ended.filter((row) => Number(row.initial) === 0);
  console.log(`  the read killed ${Date.now() - started} ms after it was sent, on ${initial.map((row) => row.node)}; its parts ran on ${parts.map((row) => `${row.node} as ${row.user}`).join(', ')}`);
  assert.is(initial.length, 1, JSON.stringify(ended));
  assert.is(initial[0]!.user, 'emo');
  // 394: cancelled by KILL QUERY; past ClickHouse's own limit it would be 159.
  assert.match(initial[0]!.exception, /^Code: 394/, 'killed, not timed out');
  assert.ok(parts.some((row) => row.shard === 2) && parts.every((row) => row.user === 'cluster'), 'each shard read as `cluster`');
});

step('deleted sessions are purged by `emo`\'s mutations on one replica of each shard; their rows go from every replica', async () => {
  assert.is(sessions.size, 2, 'rows are stored');
  // As the actor host deleting a session asks: storage queues it, and a purge round removes its rows.
  for (const { id } of sessions.values()) await call(nc!, 'sessions.purge', { caller: OWNER, session: id }, 10_000);
  const ids = `(${[...sessions.values()].map(({ id }) => literal(id)).join(', ')})`;
  for (const node of nodes) {
    await waitUntil(`the sessions' rows gone from ${node.name}`, async () =>
      (await count(node, `SELECT count() AS n FROM ${DATABASE}.audio_seconds_local WHERE session IN ${ids}`)) === 0
      && (await count(node, `SELECT count() AS n FROM ${DATABASE}.sessions_local WHERE id IN ${ids}`)) === 0, 60_000);
  }
  for (const node of nodes) {
    const mutations = await onNode<{ table: string; done: number }>(node, sql`SELECT table, min(is_done) AS done FROM system.mutations
      WHERE database = ${DATABASE} AND position(command, ${[...sessions.values()][0]!.id}) > 0 GROUP BY table ORDER BY table`);
    assert.ok(mutations.some((row) => row.table === 'audio_seconds_local'), `${node.name} ran the deletion: ${JSON.stringify(mutations)}`);
    assert.ok(mutations.every((row) => Number(row.done) === 1), `${node.name}'s mutations are done: ${JSON.stringify(mutations)}`);
  }
});

test.run();

// An insert that ClickHouse committed but whose answer never reached the storage writer: on a
// cluster (two shards, replicated tables, the writer inserting into one node's Distributed
// tables), a proxy lets the writer's INSERTs through and drops ClickHouse's answers to the first
// few. The writer retries the same blocks; each shard's replicated table recognises a block it
// already holds and drops it. Every batch spans both shards. Counted without FINAL on servers
// that never merge: every second of every session is stored exactly once, on its own shard.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { readConfig } from '../../bus/config.ts';
import { connectBus } from '../../bus/connection.ts';
import { newSessionId } from '../../bus/ids.ts';
import { createLog } from '../../bus/log.ts';
import { consumers, streams, subjects, tenantOf } from '../../bus/subjects.ts';
import { startClickHouseCluster, type ClickHouseCluster } from '../../ops/stack/clickhouse-cluster.ts';
import { startNats } from '../../ops/stack/nats.ts';
import { freePort } from '../../ops/stack/ports.ts';
import { waitUntil, type Service } from '../../ops/stack/process.ts';
import { connectClickHouse, queryRows, type ClickHouseClient } from '../../storage/clickhouse/clickhouse.ts';
import { Shards } from '../../storage/results/shards.ts';
import { sql } from '../../storage/clickhouse/sql.ts';
import { assertNoMergesOnCluster, onNode } from '../support/cluster-copies.ts';
import { NO_MERGES } from '../support/copies.ts';
import { startInsertReplyDrop, type InsertReplyDrop } from '../support/insert-reply-drop.ts';
import { audioRow } from '../support/audio-row.ts';
import { launchStorageOn } from '../support/storage-on-cluster.ts';

const config = readConfig();
const log = createLog(config);
const dir = join(config.varDir, 'test', `insert-reply-lost-${process.pid}`);
const DATABASE = 'emotions_reply_lost';
const SECONDS = 30;
const DROPS = 3;

let nats: Service & { url: string };
let cluster: ClickHouseCluster;
let proxy: InsertReplyDrop;
let clickhouse: ClickHouseClient;
let nc: NatsConnection;
let js: JetStreamClient;
let jsm: JetStreamManager;
let storage: Service | undefined;
let passed = false;

test.before(async () => {
  nats = await startNats({ dir: join(dir, 'nats'), port: await freePort() });
  cluster = await startClickHouseCluster({ dir: join(dir, 'clickhouse'), name: 'emo', shards: 2, replicas: 1, configFiles: NO_MERGES });
  proxy = await startInsertReplyDrop(new URL(cluster.nodes[0]!.url));
  clickhouse = connectClickHouse({ url: cluster.urls.join(','), username: 'default', password: '' }, DATABASE);
  nc = await connectBus('insert-reply-lost test', nats.url, log);
  js = jetstream(nc);
  jsm = await jetstreamManager(nc);
  // Every insert goes through the proxy to the first node, whose Distributed tables send each
  // shard its part: a batch spans both shards.
  storage = await launchStorageOn({
    id: `insert-reply-lost-storage-${process.pid}`,
    projectRoot: config.projectRoot,
    logFile: join(dir, 'storage.log'),
    natsUrl: nats.url,
    cluster,
    clickhouseUrl: proxy.url,
    database: DATABASE,
  });
  await assertNoMergesOnCluster(cluster.nodes, DATABASE);
});

test.after(async () => {
  await storage?.stop();
  await nc?.close();
  await clickhouse?.close();
  await proxy?.close();
  await cluster?.stop();
  await nats?.stop();
  if (passed) rmSync(dir, { recursive: true, force: true });
});


test('answers to committed inserts lost: the retried blocks are recognised, every second stored once on its shard', async () => {
  // Two sessions on each shard.
  const shards = new Shards(clickhouse, cluster.name);
  const onShard = new Map<number, string[]>([[1, []], [2, []]]);
  while ([...onShard.values()].some((ids) => ids.length < 2)) {
    const id = newSessionId();
    const shard = (await shards.of([id])).get(id)!;
    if (onShard.get(shard)!.length < 2) onShard.get(shard)!.push(id);
  }
  const sessions = [...onShard.values()].flat();

  proxy.arm(DROPS, 'audio_seconds');
  // A second of rows of every session every tenth of a second: each batch the writer flushes
  // holds rows of both shards.
  for (let second = 0; second < SECONDS; second++) {
    for (const session of sessions) await js.publish(subjects.row(session, tenantOf({ product: 'tests', user: 'writer' }), 'audio'), JSON.stringify([audioRow(session, second)]));
    await sleep(100);
  }
  await waitUntil('every row acknowledged', async () => {
    const { num_pending, num_ack_pending } = await jsm.consumers.info(streams.rows, consumers.writer);
    return num_pending === 0 && num_ack_pending === 0;
  }, 120_000);

  // The fault hit: inserts ClickHouse had committed (200) went unanswered.
  console.log(`  answers dropped: ${JSON.stringify(proxy.dropped.map((drop) => drop.status))}`);
  assert.is(proxy.dropped.length, DROPS, 'the answers of the armed inserts were dropped');
  assert.ok(proxy.dropped.every((drop) => drop.status.startsWith('HTTP/1.1 200')), 'each one to an insert ClickHouse had committed');

  for (const node of cluster.nodes) {
    const rows = await onNode(node, DATABASE, (on) => queryRows<{ session: string; seconds: number; rows: number }>(on,
      `SELECT session, uniqExact(second) AS seconds, count() AS rows FROM audio_seconds_local GROUP BY session ORDER BY session`));
    const held = rows.map((row) => ({ session: row.session, seconds: Number(row.seconds), rows: Number(row.rows) }));
    console.log(`  ${node.name} (shard ${node.shard}), without FINAL: ${JSON.stringify(held)}`);
    const mine = onShard.get(node.shard)!;
    assert.equal(held.map((row) => row.session).sort(), [...mine].sort(), `${node.name} holds its shard's sessions, and only those`);
    for (const row of held) assert.equal(row, { session: row.session, seconds: SECONDS, rows: SECONDS }, `each second of ${row.session} once on ${node.name}`);
  }
  const [copies] = await queryRows<{ n: number }>(clickhouse, sql`SELECT count() AS n FROM audio_seconds WHERE has(${sessions}, session)`);
  assert.is(Number(copies?.n), sessions.length * SECONDS, 'as many rows through the Distributed table as seconds published');
  passed = true;
});

test.run();

// An insert whose commit to ZooKeeper is cut off: a replicated table writes the part to its disk,
// then registers it in ZooKeeper with one multi-request, and the connection is lost right there
// (a proxy between the first replica's server and ZooKeeper, test/support/zookeeper-commit-drop.ts).
// The server cannot tell whether ZooKeeper applied it, and answers the insert "unknown status";
// the storage writer retries the same block. Both outcomes are made to happen:
// - ZooKeeper applied it (its answer lost): the retry is recognised by its hash and dropped;
// - ZooKeeper never saw it: the retry is stored, and the first attempt's part stays on that
//   replica's disk, unknown to ZooKeeper, until ClickHouse's part check removes it (five minutes
//   after it was written) or the server restarts.
// Counted without FINAL on servers that never merge.
import { readFileSync, rmSync } from 'node:fs';
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
import { startClickHouseCluster, type ClickHouseCluster, type ClickHouseNode } from '../../ops/stack/clickhouse-cluster.ts';
import { startNats } from '../../ops/stack/nats.ts';
import { freePort } from '../../ops/stack/ports.ts';
import { waitUntil, type Service } from '../../ops/stack/process.ts';
import { queryRows } from '../../storage/clickhouse/clickhouse.ts';
import { sql } from '../../storage/clickhouse/sql.ts';
import { assertNoMergesOnCluster, loggedSeconds, onNode, partsUnknownToZooKeeper } from '../support/cluster-copies.ts';
import { NO_MERGES } from '../support/copies.ts';
import { startZooKeeperCommitDrop, type CommitDrop, type ZooKeeperCommitDrop } from '../support/zookeeper-commit-drop.ts';
import { audioRow } from '../support/audio-row.ts';
import { launchStorageOn } from '../support/storage-on-cluster.ts';

const config = readConfig();
const log = createLog(config);
const dir = join(config.varDir, 'test', `zookeeper-commit-lost-${process.pid}`);
const DATABASE = 'emotions_commit_lost';
const SECONDS = 20;

let nats: Service & { url: string };
let cluster: ClickHouseCluster;
let proxy: ZooKeeperCommitDrop;
let nc: NatsConnection;
let js: JetStreamClient;
let jsm: JetStreamManager;
let storage: Service | undefined;
let first: ClickHouseNode;
let second: ClickHouseNode;
const storageLog = join(dir, 'storage.log');
let passed = 0;

test.before(async () => {
  nats = await startNats({ dir: join(dir, 'nats'), port: await freePort() });
  cluster = await startClickHouseCluster({
    dir: join(dir, 'clickhouse'), name: 'emo', shards: 1, replicas: 2, configFiles: NO_MERGES,
    zookeeperFor: async (node, members) => {
      if (node.replica !== 1) return members;
      proxy = await startZooKeeperCommitDrop(members[0]!);
      return [proxy];
    },
  });
  [first, second] = cluster.nodes as [ClickHouseNode, ClickHouseNode];
  nc = await connectBus('zookeeper-commit-lost test', nats.url, log);
  js = jetstream(nc);
  jsm = await jetstreamManager(nc);
  // Every insert goes to the first replica, the one whose ZooKeeper connection is cut.
  storage = await launchStorageOn({
    id: `zookeeper-commit-lost-storage-${process.pid}`,
    projectRoot: config.projectRoot,
    logFile: storageLog,
    natsUrl: nats.url,
    cluster,
    clickhouseUrl: first.url,
    database: DATABASE,
  });
  await assertNoMergesOnCluster(cluster.nodes, DATABASE);
});

test.after(async () => {
  await storage?.stop();
  await nc?.close();
  await proxy?.close();
  await cluster?.stop();
  await nats?.stop();
  if (passed === 2) rmSync(dir, { recursive: true, force: true });
});

/** Publishes a second of audio rows a tenth of a second apart, with the commit of one insert cut as `drop` says. */
async function publishWithCommitCut(drop: CommitDrop): Promise<string> {
  const session = newSessionId();
  const droppedBefore = proxy.dropped.length;
  proxy.arm(drop, 'audio_seconds');
  for (let second = 0; second < SECONDS; second++) {
    await js.publish(subjects.row(session, tenantOf({ product: 'tests', user: 'writer' }), 'audio'), JSON.stringify([audioRow(session, second)]));
    await sleep(100);
  }
  await waitUntil('every row acknowledged', async () => {
    const { num_pending, num_ack_pending } = await jsm.consumers.info(streams.rows, consumers.writer);
    return num_pending === 0 && num_ack_pending === 0;
  }, 120_000);
  assert.equal(proxy.dropped.slice(droppedBefore), [{ drop, table: 'audio_seconds' }], `the commit of one insert was cut (${drop})`);
  return session;
}

/** What the writer was told when its insert failed, from its log. */
function insertFailures(): string[] {
  return readFileSync(storageLog, 'utf8').split('\n').filter((line) => line.includes('inserting rows failed'))
    .map((line) => (JSON.parse(line) as { err?: { message?: string } }).err?.message?.split('\n')[0] ?? '');
}

/** Each second's copies of `session` on `node`, without FINAL, with the parts that hold them. */
async function copiesOn(node: ClickHouseNode, session: string): Promise<Map<number, string[]>> {
  const rows = await onNode(node, DATABASE, (on) => queryRows<{ second: number; part: string }>(on,
    sql`SELECT second, _part AS part FROM audio_seconds_local WHERE session = ${session} ORDER BY second`));
  const copies = new Map<number, string[]>();
  for (const row of rows) copies.set(Number(row.second), [...(copies.get(Number(row.second)) ?? []), row.part]);
  return copies;
}

async function waitForEverySecond(node: ClickHouseNode, session: string): Promise<Map<number, string[]>> {
  let copies = new Map<number, string[]>();
  await waitUntil(`${node.name} holding every second of ${session}`, async () => {
    copies = await copiesOn(node, session);
    return copies.size === SECONDS;
  }, 60_000);
  return copies;
}

const doubled = (copies: Map<number, string[]>) => [...copies].filter(([, parts]) => parts.length > 1);

test('the commit applied but its answer lost: the retry is recognised, every second stored once on each replica', async () => {
  const failuresBefore = insertFailures().length;
  const session = await publishWithCommitCut('reply');
  const failures = insertFailures().slice(failuresBefore);
  console.log(`  the writer was told: ${JSON.stringify(failures)}`);
  assert.ok(failures.length >= 1, 'the insert whose commit was cut failed, and was retried');
  for (const node of [first, second]) {
    const copies = await waitForEverySecond(node, session);
    console.log(`  ${node.name}, without FINAL: ${copies.size} seconds, stored twice: ${JSON.stringify(doubled(copies))}`);
    assert.equal(doubled(copies), [], `each second once on ${node.name}`);
  }
  passed++;
});

test('the commit never reached ZooKeeper: the retry is stored; the orphan part, unknown to ZooKeeper, goes at the restart', async () => {
  const failuresBefore = insertFailures().length;
  const session = await publishWithCommitCut('request');
  const failures = insertFailures().slice(failuresBefore);
  console.log(`  the writer was told: ${JSON.stringify(failures)}`);
  assert.ok(failures.length >= 1, 'the insert whose commit was cut failed, and was retried');

  const onSecond = await waitForEverySecond(second, session);
  assert.equal(doubled(onSecond), [], `each second once on ${second.name}, which only fetches what ZooKeeper lists`);

  const onFirst = await waitForEverySecond(first, session);
  const orphans = new Set(await partsUnknownToZooKeeper(first, DATABASE, 'audio_seconds_local'));
  console.log(`  ${first.name}, without FINAL: stored twice ${JSON.stringify(doubled(onFirst))}; parts unknown to ZooKeeper: ${JSON.stringify([...orphans])}`);
  assert.ok(doubled(onFirst).length >= 1, `the cut insert's rows are on ${first.name} twice`);
  const unknownStatus = loggedSeconds([storageLog], 'audio_seconds', 'unknownStatusRows').get(session) ?? new Set();
  for (const [secondOf, parts] of doubled(onFirst)) {
    assert.ok(unknownStatus.has(secondOf), `the writer logged second ${secondOf}'s insert as of unknown status`);
    assert.is(parts.length, 2, `second ${secondOf} at most twice`);
    assert.is(parts.filter((part) => orphans.has(part)).length, 1, `second ${secondOf}'s extra copy is in a part ZooKeeper does not know`);
  }

  // At its start a server sets aside every part ZooKeeper does not know (its part check does
  // the same to a part five minutes old): the orphan's rows go, the retried ones stay.
  await first.stop();
  await first.start();
  const afterRestart = await waitForEverySecond(first, session);
  assert.equal(doubled(afterRestart), [], `each second once on ${first.name} after its restart`);
  assert.equal(await partsUnknownToZooKeeper(first, DATABASE, 'audio_seconds_local'), [], 'no part unknown to ZooKeeper left');
  passed++;
});

test.run();

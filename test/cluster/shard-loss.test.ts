// The whole service on a cluster (three NATS servers, ClickHouse as 2 shards x 2 replicas, two of
// each service process), with a live session on each shard, losing a whole shard for 45 s twice:
// both its servers killed with kill -9, then the same shard cut off by a partition (packets to its
// ports and every packet its servers send dropped: the servers run on, connections to and from
// them hang, their ZooKeeper sessions lapse). Meanwhile reads of the lost
// shard's session answer 503 within the request timeout, reads of the other's 200, and how long
// the other shard's rows stood still is printed (a batch holding rows of both shards waits for
// the lost one: docs/operations.md); afterwards every second of media received has exactly one
// row (save audio a host shed: shed-audio.ts), counted without FINAL on servers that never merge
// (a second copy only where the design makes one: cluster-copies.ts), nothing was dead-lettered
// and ROWS drains.
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { readConfig } from '../../bus/config.ts';
import { consumers, streams } from '../../bus/subjects.ts';
import { connectClickHouse, queryRows, type ClickHouseClient } from '../../storage/clickhouse/clickhouse.ts';
import { Shards } from '../../storage/results/shards.ts';
import { startCluster, type Cluster } from '../../ops/stack/cluster.ts';
import type { ClickHouseNode } from '../../ops/stack/clickhouse-cluster.ts';
import { freePort } from '../../ops/stack/ports.ts';
import { waitUntil } from '../../ops/stack/process.ts';
import { publish, waitForStream, type Publisher } from '../../ops/support/streams/publish.ts';
import { startRtmpServer, type RtmpServer } from '../../ops/support/streams/rtmp-server.ts';
import { makeClip } from '../support/clips.ts';
import { cutOff } from '../support/partition.ts';
import { assertAudioStoredOnce, assertNoMergesOnCluster, onNode } from '../support/cluster-copies.ts';
import { NO_MERGES } from '../support/copies.ts';
import { finalMediaSeconds } from '../support/final-media.ts';
import { assertGapsShed, gapsOf, shedAudioSeconds } from '../support/shed-audio.ts';
import { sql } from '../../storage/clickhouse/sql.ts';
import { httpRequest } from '../../ops/stack/http-client.ts';

const config = readConfig();
const token = `cluster-${randomBytes(6).toString('hex')}`;
const DATABASE = 'emotions_shards';
const FAULT_MS = 45_000;
// A read may take the gateway's whole bus timeout; past this it hung.
const READ_LIMIT_MS = config.requestTimeoutMs + 5000;

let cluster: Cluster;
let rtmp: RtmpServer;
let publisher: Publisher;
let nc: NatsConnection;
let jsm: JetStreamManager;
let clickhouse: ClickHouseClient;
/** One session on each shard, by shard number. */
const sessionOn = new Map<number, string>();
/** The seconds of audio rows each session published, as heard live on the bus, with how many times. */
const heard = new Map<string, Map<number, number>>();
const LOST = 1;
const KEPT = 2;

async function api(base: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const { status, text } = await httpRequest(base + path, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(READ_LIMIT_MS),
  });
  return { status, body: text ? JSON.parse(text) : undefined };
}

const shardNodes = (shard: number) => cluster.clickhouse.nodes.filter((node) => node.shard === shard);

/** The newest audio second of a session stored on any reachable replica of its shard. */
async function newestStored(session: string, shard: number): Promise<number> {
  let newest = 0;
  for (const node of shardNodes(shard)) {
    const direct = connectClickHouse({ url: node.url, username: 'default', password: '' }, DATABASE);
    try {
      const [row] = await queryRows<{ s: number }>(direct, `SELECT max(second) AS s FROM audio_seconds_local WHERE session = '${session}'`);
      newest = Math.max(newest, Number(row?.s ?? 0));
    } catch {
      // unreachable: the other replica answers
    } finally {
      await direct.close();
    }
  }
  return newest;
}

/** Waits until every session's rows are stored up to the newest second heard live; how long it took. */
async function settled(timeoutMs: number): Promise<number> {
  const since = Date.now();
  await waitUntil('rows stored up to what was heard live', async () => {
    for (const [shard, id] of sessionOn) {
      if ((await newestStored(id, shard)) < Math.max(...heard.get(id)!.keys()) - 1) return false;
    }
    return true;
  }, timeoutMs);
  return Date.now() - since;
}

/**
 * Reads the audio features of the session on each shard through every gateway until stopped;
 * tells the statuses seen per shard (0: no answer within READ_LIMIT_MS), and how long the kept
 * shard's stored rows stood still at most.
 */
/** How many reads answered each status. */
type Statuses = Map<number, number>;

function watch(): { stop(): Promise<{ lost: Statuses; kept: Statuses; stallMs: number }> } {
  const statuses = new Map<number, Statuses>([[LOST, new Map()], [KEPT, new Map()]]);
  let running = true;
  const reads = (async () => {
    while (running) {
      for (const gateway of cluster.gateways) {
        await Promise.all([LOST, KEPT].map(async (shard) => {
          const path = `/v1/sessions/${sessionOn.get(shard)}/audio/features?granularity=5`;
          const status = await api(gateway.baseUrl, 'GET', path).then((reply) => reply.status, () => 0);
          const counts = statuses.get(shard)!;
          counts.set(status, (counts.get(status) ?? 0) + 1);
        }));
      }
      await sleep(500);
    }
  })();
  let stallMs = 0;
  const progress = (async () => {
    const kept = sessionOn.get(KEPT)!;
    let newest = await newestStored(kept, KEPT);
    let since = Date.now();
    while (running) {
      await sleep(250);
      const now = await newestStored(kept, KEPT);
      if (now > newest) [newest, since] = [now, Date.now()];
      stallMs = Math.max(stallMs, Date.now() - since);
    }
  })();
  return {
    async stop() {
      running = false;
      await Promise.all([reads, progress]);
      return { lost: statuses.get(LOST)!, kept: statuses.get(KEPT)!, stallMs };
    },
  };
}

const described = (statuses: Statuses) => [...statuses].map(([status, n]) => `${n} x ${status}`).join(', ');

/**
 * Runs `fault` on the lost shard for 45 s (three times the writer's ack_wait), checks what
 * happened meanwhile, undoes it, prints the figures. `keptMayFail`: reads of the other shard's
 * session may answer 503 as well as 200 (never hang, never 500).
 */
async function loseShard(what: string, keptMayFail: boolean, fault: (nodes: ClickHouseNode[]) => Promise<() => Promise<void>>): Promise<void> {
  await settled(60_000);
  const undo = await fault(shardNodes(LOST));
  let seen: Awaited<ReturnType<ReturnType<typeof watch>['stop']>>;
  try {
    const watching = watch();
    await sleep(FAULT_MS);
    seen = await watching.stop();
  } finally {
    await undo();
  }
  const recoveredMs = await settled(120_000);
  console.log(`  ${what}: reads of the lost shard ${described(seen.lost)}; of the other ${described(seen.kept)}; ` +
    `the other shard's rows stood still ${seen.stallMs} ms at most; every row stored ${recoveredMs} ms after the shard was back`);
  assert.equal([...seen.lost.keys()], [503], `${what}: reads of the lost shard's session answer 503 within the request timeout`);
  const keptAllowed = keptMayFail ? [200, 503] : [200];
  const keptSeen = [...seen.kept.keys()];
  assert.ok(keptSeen.every((status) => keptAllowed.includes(status)), `${what}: reads of the other shard's session answer ${keptAllowed.join(' or ')}, saw ${described(seen.kept)}`);
  assert.ok(seen.kept.has(200), `${what}: reads of the other shard's session answer 200`);
}

test.before(async () => {
  const dir = join(config.varDir, 'test', `shards-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  const tokensFile = join(dir, 'tokens.json');
  writeFileSync(tokensFile, JSON.stringify([{ token, user: 'shard-tester', product: 'tests' }]));
  rtmp = await startRtmpServer({ dir: join(dir, 'rtmp'), rtmpPort: await freePort(), rtmpsPort: await freePort() });
  const clip = await makeClip(
    { width: 320, height: 180, seconds: 6, fps: 10, container: 'flv', video: { type: 'testsrc' }, audio: { type: 'tones', tones: [{ hz: 220, seconds: 3 }, { hz: 330, seconds: 3 }] } },
    join(config.varDir, 'test', 'clips'),
  );
  const uri = rtmp.url('shards');
  publisher = publish(clip, uri);
  await waitForStream(uri);
  cluster = await startCluster({
    dir,
    projectRoot: config.projectRoot,
    env: { ...process.env, CLICKHOUSE_DATABASE: DATABASE, AUTH_TOKENS_FILE: tokensFile, ALLOW_PRIVATE_STREAM_HOSTS: 'true', LOG_LEVEL: 'info' },
    clickhouseConfigFiles: NO_MERGES,
  });
  nc = await connect({ servers: cluster.nats.url.split(','), maxReconnectAttempts: -1, reconnectTimeWait: 200 });
  jsm = await jetstreamManager(nc);
  clickhouse = connectClickHouse({ url: cluster.clickhouse.urls.join(','), username: 'default', password: '' }, DATABASE);
  await assertNoMergesOnCluster(cluster.clickhouse.nodes, DATABASE);
  // Sessions are spread over the shards by a hash of their random id: made until each shard has
  // one, the spares stopped at once (forty creates fail to place both once in 2^39 runs). Each
  // kept session must then store its first rows on the shard predicted for it, and none on the other.
  const shards = new Shards(clickhouse, cluster.clickhouse.name);
  for (let made = 0; sessionOn.size < 2; made++) {
    assert.ok(made < 40, 'forty sessions leave a shard without one');
    const created = await api(cluster.gateways[0]!.baseUrl, 'POST', '/v1/sessions', { name: `shards-${made}`, streamUri: uri });
    assert.is(created.status, 201, JSON.stringify(created.body));
    const id: string = created.body._id;
    const shard = (await shards.of([id])).get(id)!;
    if (sessionOn.has(shard)) {
      assert.is((await api(cluster.gateways[0]!.baseUrl, 'POST', `/v1/sessions/${id}/stop`)).status, 200);
      continue;
    }
    const seconds = new Map<number, number>();
    nc.subscribe(`emo.rows.${id}.*.*.audio`, { callback: (_, msg) => msg.json<{ second: number }[]>().forEach((row) => seconds.set(row.second, (seconds.get(row.second) ?? 0) + 1)) });
    sessionOn.set(shard, id);
    heard.set(id, seconds);
  }
  for (const [shard, id] of sessionOn) {
    await waitUntil(`session ${id}'s first rows stored on shard ${shard}`, async () => (await newestStored(id, shard)) > 0, 60_000);
    assert.is(await newestStored(id, shard === LOST ? KEPT : LOST), 0, `session ${id} has no rows on the other shard`);
  }
});

test.after(async () => {
  await clickhouse?.close();
  await nc?.close();
  await cluster?.stop();
  await publisher?.stop();
  await rtmp?.stop();
});

// Under load (the cluster stage runs other cluster files beside this one), one read of the other
// shard's session may pass its deadline and answer 503 here too (1 of 64 in a clean-clone run).
test('both servers of a shard killed for 45 s: its reads answer 503, the other shard\'s 200 or 503', async () => {
  await loseShard('shard killed', true, async (nodes) => {
    await Promise.all(nodes.map((node) => node.kill()));
    return async () => void (await Promise.all(nodes.map((node) => node.start())));
  });
});

// Cut off, a shard's servers go silent on the connections other servers opened to them before:
// a read of the other shard's session can wait on one past the request's deadline and answer
// 503 (in one run of four; the likely cause, not proven). The rest answer 200.
/** Whether `node`'s replica of the audio table holds a live ZooKeeper session, as a node of the other shard sees it. */
async function activeInZooKeeper(node: ClickHouseNode): Promise<boolean> {
  const asker = shardNodes(node.shard === LOST ? KEPT : LOST)[0]!;
  const path = `/clickhouse/tables/${node.shard}/${DATABASE}/audio_seconds/replicas/${node.name}`;
  const children = await onNode(asker, DATABASE, (on) => queryRows<{ name: string }>(on, sql`SELECT name FROM system.zookeeper WHERE path = ${path}`));
  return children.some((child) => child.name === 'is_active');
}

test('the same shard cut off by a partition for 45 s, both ways: its reads answer 503, the other shard\'s 200 or 503, none hangs', async () => {
  await loseShard('shard cut off', true, async (nodes) => {
    const cgroups = nodes.map((node) => node.cgroup?.path);
    assert.ok(cgroups.every((path) => path !== undefined), 'each server of the shard runs in a cgroup of its own, so that all it sends can be dropped');
    for (const node of nodes) assert.ok(await activeInZooKeeper(node), `${node.name} holds a ZooKeeper session before the cut`);
    const partition = cutOff(nodes.flatMap((node) => [Number(new URL(node.url).port), node.tcpPort, node.interserverPort]), cgroups as string[]);
    return async () => {
      try {
        // Cut off both ways, its servers reached ZooKeeper no more: their sessions lapsed.
        for (const node of nodes) assert.not.ok(await activeInZooKeeper(node), `${node.name} lost its ZooKeeper session while cut off`);
      } finally {
        partition.heal();
      }
    };
  });
});

test('afterwards: every second of media received has exactly one row, nothing dead-lettered, ROWS drained', async () => {
  for (const id of sessionOn.values()) {
    assert.is((await api(cluster.gateways[1]!.baseUrl, 'POST', `/v1/sessions/${id}/stop`)).status, 200);
  }
  await waitUntil('sessions finished', async () => {
    const records = await Promise.all([...sessionOn.values()].map((id) => api(cluster.gateways[0]!.baseUrl, 'GET', `/v1/sessions/${id}`)));
    return records.every((record) => record.body?.state === 'finished');
  }, 30_000);
  await waitUntil('the rows stream drained into ClickHouse', async () => {
    const consumer = await jsm.consumers.info(streams.rows, consumers.writer);
    return consumer.num_pending === 0 && consumer.num_ack_pending === 0;
  }, 120_000);
  assert.is((await jsm.streams.info(streams.deadRows)).state.messages, 0, 'nothing dead-lettered');
  let missing = 0;
  // The sessions are stopped and their rows drained: what the hosts shed is final.
  const shed = await shedAudioSeconds(cluster.hosts);
  for (const [shard, id] of sessionOn) {
    const live = [...heard.get(id)!.keys()];
    let seconds: number[] = [];
    await waitUntil('every second heard live stored', async () => {
      seconds = (await queryRows<{ second: number }>(clickhouse, sql`SELECT second FROM audio_seconds WHERE session = ${id} GROUP BY second ORDER BY second`))
        .map((row) => Number(row.second));
      return live.every((second) => seconds.includes(second));
    }, 30_000).catch(() => {});
    const media = await finalMediaSeconds(async () => (await api(cluster.gateways[0]!.baseUrl, 'GET', `/v1/sessions/${id}`)).body.meta.mediaSeconds as number, seconds.length, 2);
    const { gaps, missing: missingHere } = gapsOf(seconds);
    console.log(`  session ${id}: ${media} s of media received, ${seconds.length} audio rows, ${live.length} heard live, gaps [${gaps}]`);
    assert.equal(live.filter((second) => !seconds.includes(second)), [], 'every second heard live is stored');
    missing += missingHere;
    // The media begins and ends in the middle of a second, each with its row (node-loss.test.ts).
    // A host that shed audio has stored a second fewer than that with no gap (119 rows for
    // 120.14 s of media, 2.8 s shed in fragments): allowed, as far as the hosts shed.
    const surplus = seconds.length + missingHere - media;
    assert.ok(surplus >= -1 - shed && surplus <= 2, `${seconds.length} rows for ${media} s of media, ${shed.toFixed(1)} s of audio shed`);
    await assertAudioStoredOnce({ database: DATABASE, nodes: cluster.clickhouse.nodes, shard, session: id, seconds, heard: heard.get(id)!, storage: cluster.storage });
  }
  // A second without its row only where a host shed the audio.
  await assertGapsShed(missing, cluster.hosts);
});

test.run();

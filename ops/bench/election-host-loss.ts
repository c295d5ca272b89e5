// What an actor host killed while it holds rows the bus has not acknowledged takes with it. On
// the local cluster (three NATS servers, two actor hosts, ClickHouse 2 x 2) one live session
// runs; its owner is killed with kill -9 twice, the other host taking the session over each time:
//   alone: the bus answers every publish at once, the host holds next to nothing;
//   during an election: the NATS server leading ROWS is killed first, and the owner once it
//   says it holds rows the bus has not acknowledged (emo_row_messages_unacknowledged).
// For each, the seconds of media without a row around the kill, against what the owner said it
// held. Run with the cluster's own processes only:
//   node --import tsx ops/bench/election-host-loss.ts [trials]
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import { buckets, consumers, readConfig, streams, type SessionRecord } from '../../bus/index.ts';
import { connectClickHouse } from '../../storage/index.ts';
import { freePort, startCluster, waitUntil, type ServiceProcess } from '../stack/index.ts';
import { makeClip } from '../support/clips.ts';
import { parsePrometheusText, total } from '../support/prometheus-text.ts';
import { publish, waitForStream } from '../support/streams/publish.ts';
import { startRtmpServer } from '../support/streams/rtmp-server.ts';
import { markdownTable } from './lib/stats.ts';

const config = readConfig();
const TRIALS = Number(process.argv[2] ?? 2);
const TAKEOVER_SECONDS = 4;
const DATABASE = 'election_bench';
const token = `bench-${randomBytes(6).toString('hex')}`;
const dir = join(config.varDir, 'bench', `election-host-loss-${process.pid}`);
mkdirSync(dir, { recursive: true });
const tokensFile = join(dir, 'tokens.json');
writeFileSync(tokensFile, JSON.stringify([{ token, user: 'bench', product: 'bench' }]));

const rtmp = await startRtmpServer({ dir: join(dir, 'rtmp'), rtmpPort: await freePort(), rtmpsPort: await freePort() });
const clip = await makeClip(
  { width: 320, height: 180, seconds: 6, fps: 10, container: 'flv', video: { type: 'testsrc' }, audio: { type: 'tones', tones: [{ hz: 220, seconds: 3 }, { hz: 330, seconds: 3 }] } },
  join(dir, 'clips'),
);
const uri = rtmp.url('election');
const publisher = publish(clip, uri);
await waitForStream(uri);
const cluster = await startCluster({
  dir,
  projectRoot: config.projectRoot,
  env: {
    ...process.env, CLICKHOUSE_DATABASE: DATABASE, AUTH_TOKENS_FILE: tokensFile, ALLOW_PRIVATE_STREAM_HOSTS: 'true',
    HEARTBEAT_SECONDS: '1', TAKEOVER_SECONDS: String(TAKEOVER_SECONDS), ANALYSIS_FPS: '1',
  },
});
const nc = await connect({ servers: cluster.nats.url.split(','), maxReconnectAttempts: -1, reconnectTimeWait: 200 });
const jsm = await jetstreamManager(nc);
const kv = await new Kvm(jetstream(nc)).open(buckets.sessions);
const clickhouse = connectClickHouse({ url: cluster.clickhouse.urls.join(','), username: 'default', password: '' }, DATABASE);

async function api(method: string, path: string, body?: unknown): Promise<any> {
  const response = await fetch(cluster.gateways[0]!.baseUrl + path, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return response.json();
}

const unacknowledged = async (host: ServiceProcess) =>
  total(parsePrometheusText(await (await fetch(`${host.metricsUrl}/metrics`)).text()), 'emo_row_messages_unacknowledged') ?? 0;

interface Loss {
  kind: string;
  heldAtKill: number;
  lastBefore: number;
  firstAfter: number;
}

try {
  const { _id: id } = await api('POST', '/v1/sessions', { name: 'election', streamUri: uri });
  // The newest second heard published on the bus, and when.
  const heard = new Map<number, number>();
  nc.subscribe(`emo.rows.${id}.*.*.audio`, { callback: (_, msg) => msg.json<{ second: number }[]>().forEach((row) => heard.set(row.second, Date.now())) });
  const owner = async () => {
    const name = (await kv.get(id))?.json<SessionRecord>().owner;
    return cluster.hosts.find((host) => host.id === name)!;
  };
  await waitUntil('rows flowing', async () => heard.size > 10, 120_000);

  const losses: Loss[] = [];
  for (let trial = 0; trial < TRIALS; trial++) {
    for (const election of [false, true]) {
      const host = await owner();
      await waitUntil('the owner holding nothing unacknowledged', async () => (await unacknowledged(host)) === 0, 60_000);
      await sleep(5000);
      let killedNats: (typeof cluster.nats.nodes)[number] | undefined;
      if (election) {
        const name = (await jsm.streams.info(streams.rows)).cluster?.leader;
        killedNats = cluster.nats.nodes.find((node) => node.name === name)!;
        await killedNats.kill();
        await waitUntil('the owner holding rows the bus has not acknowledged', async () => (await unacknowledged(host)) > 0, 10_000);
      }
      const heldAtKill = await unacknowledged(host);
      const killedAt = Date.now();
      await host.kill();
      const lastBefore = Math.max(...[...heard].filter(([, at]) => at < killedAt).map(([second]) => second));
      await waitUntil('the session analysed again', async () => [...heard.values()].some((at) => at > killedAt + 1000), 60_000);
      const firstAfter = Math.min(...[...heard].filter(([, at]) => at > killedAt + 1000).map(([second]) => second));
      losses.push({ kind: election ? 'during an election' : 'alone', heldAtKill, lastBefore, firstAfter });
      await host.start();
      await killedNats?.start();
      console.log(`${election ? 'during an election' : 'alone'}: ${heldAtKill} row messages held unacknowledged at the kill; last second heard before ${lastBefore}, first after ${firstAfter}`);
    }
  }
  await api('POST', `/v1/sessions/${id}/stop`);
  await waitUntil('every row stored', async () => {
    const info = await jsm.consumers.info(streams.rows, consumers.writer).catch(() => undefined);
    return info !== undefined && info.num_pending === 0 && info.num_ack_pending === 0;
  }, 120_000);
  const stored = new Set((await (await clickhouse.query({ query: `SELECT DISTINCT second FROM audio_seconds WHERE session = '${id}'`, format: 'JSONEachRow' })).json<{ second: number }>()).map((row) => Number(row.second)));
  const rows = losses.map((loss) => {
    // From a few seconds before the kill to the first second the new owner published: the
    // seconds without a row, and of those the ones published (heard) but never stored.
    const missing: number[] = [];
    for (let second = loss.lastBefore - 5; second < loss.firstAfter; second++) if (!stored.has(second)) missing.push(second);
    const heardNotStored = missing.filter((second) => heard.has(second));
    return [loss.kind, String(loss.heldAtKill), `${loss.lastBefore} / ${loss.firstAfter}`, String(missing.length), String(heardNotStored.length)];
  });
  console.log(`\nthe owner of a live session killed (kill -9); another host takes it over after TAKEOVER_SECONDS=${TAKEOVER_SECONDS}\n`);
  console.log(markdownTable(['owner killed', 'row messages held unacknowledged at the kill', 'last second published before / first after', 'seconds without a row', 'of them published, not stored'], rows));
} finally {
  await clickhouse.close();
  await nc.close();
  await cluster.stop();
  await publisher.stop();
  await rtmp.stop();
  rmSync(dir, { recursive: true, force: true });
}

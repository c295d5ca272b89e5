// The owner of a live session stalls past TAKEOVER_SECONDS, the other host takes the session
// over, and the stalled host then runs again: the split brain of two ffmpegs on one stream and
// two writers of one second. Stalled two ways: paused (SIGSTOP, as a long GC pause or a full
// disk would), and cut off from NATS (a proxy between it and NATS resets its connection) while
// it goes on analysing. Once back, it finds the session lost and stops its ffmpeg; rows it made
// for seconds of the new owner's epoch are refused by the storage writer (storage/writer/fence.ts);
// every second has one audio and one video row, counted without FINAL on a ClickHouse of the
// file's own that merges nothing (test/support/copies.ts); and the session stays with the new
// owner.
import { join } from 'node:path';
import { jetstream } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import * as assert from 'uvu/assert';
import { readConfig } from '../../bus/config.ts';
import { createLog } from '../../bus/log.ts';
import { SessionRecords } from '../../bus/session-records.ts';
import { startClickHouse } from '../../ops/stack/clickhouse.ts';
import { freePort } from '../../ops/stack/ports.ts';
import { waitUntil, type Service } from '../../ops/stack/process.ts';
import { startServices, type Services } from '../../ops/support/services.ts';
import { startRtmpServer, type RtmpServer } from '../../ops/support/streams/rtmp-server.ts';
import { publish, waitForStream, type Publisher } from '../../ops/support/streams/publish.ts';
import { connectClickHouse, queryRows, type ClickHouseClient } from '../../storage/clickhouse/clickhouse.ts';
import { sql } from '../../storage/clickhouse/sql.ts';
import { makeClip } from '../support/clips.ts';
import { assertNoMerges, NO_MERGES, storedTwice } from '../support/copies.ts';
import { pullersUnder } from '../support/pullers.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';
import { test } from '../../ops/support/uvu.ts';
import { httpRequest } from '../../ops/stack/http-client.ts';

const config = readConfig();
const NAME = 'stalled-host';
const TAKEOVER_SECONDS = 4;
const dir = join(config.varDir, 'test', 'streams', `${NAME}-${process.pid}`);

let clickhouseServer: Service & { url: string };
let clickhouse: ClickHouseClient;
let services: Services;
let rtmp: RtmpServer;
let publisher: Publisher;
let nc: NatsConnection;
let records: SessionRecords;
let stopped: Service | undefined;
let proxy: TcpProxy | undefined;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A host's id as startServices names it, in the order it started them. */
let hostId = (host: Service) => `${NAME}-host-${services.hosts.indexOf(host) + 1}`;

async function fencedRows(): Promise<number> {
  const text = await (await httpRequest(`${services.metrics.storage}/metrics`)).text;
  return Number(/^emo_rows_fenced_total (\S+)$/m.exec(text)?.[1] ?? NaN);
}

const serviceEnv = () => ({ CLICKHOUSE_URL: clickhouseServer.url, HEARTBEAT_SECONDS: '1', TAKEOVER_SECONDS: String(TAKEOVER_SECONDS) });

/**
 * After the stalled host is back: it stops its ffmpeg within seconds while the new owner pulls
 * on, the owner does not change again, and once the session stops every second of it has one
 * row. Returns how long the stalled host took to stop its ffmpeg.
 */
async function assertFenced(id: string, stale: Service, owner: Service): Promise<number> {
  const backAt = Date.now();
  await waitUntil('the stalled host to stop its ffmpeg', async () => pullersUnder(id, stale.pid).length === 0, 10_000);
  const stoppedAfterMs = Date.now() - backAt;
  assert.is(pullersUnder(id, owner.pid).length, 1, 'the new owner pulls on');
  // The session stays with the new owner: watched for the rest of the run.
  const owners = new Set<string | undefined>();
  for (let i = 0; i < 16; i++) {
    const now = (await records.fresh(id))!.record;
    owners.add(now.owner);
    assert.is(now.epoch, 1, 'no further takeover');
    assert.is(pullersUnder(id, stale.pid).length, 0, 'the stalled host pulls no more');
    await sleep(250);
  }
  assert.equal([...owners], [hostId(owner)], 'the owner never flips back');

  const stop = await services.api('POST', `/v1/sessions/${id}/stop`);
  assert.is(stop.status, 200);
  await services.rowsStored();
  await assertNoMerges(clickhouse);
  assert.equal(await storedTwice(clickhouse, 'audio_seconds', ['second'], id), [], 'each second has one audio row');
  assert.equal(await storedTwice(clickhouse, 'video_seconds', ['second'], id), [], 'each second has one video row');
  const [span] = await queryRows<{ seconds: number }>(clickhouse, sql`SELECT uniqExact(second) AS seconds FROM audio_seconds WHERE session = ${id}`);
  assert.ok(Number(span?.seconds) > 5, `rows were stored: ${JSON.stringify(span)}`);
  return stoppedAfterMs;
}

test.before(async () => {
  clickhouseServer = await startClickHouse({ dir: join(dir, 'clickhouse'), httpPort: await freePort(), tcpPort: await freePort(), configFiles: NO_MERGES });
  clickhouse = connectClickHouse({ url: clickhouseServer.url, username: 'default', password: '' }, config.clickhouseDatabase);
  rtmp = await startRtmpServer({ dir: join(dir, 'rtmp'), rtmpPort: await freePort(), rtmpsPort: await freePort() });
  const clip = await makeClip(
    { width: 640, height: 360, seconds: 6, fps: 15, container: 'flv', video: { type: 'testsrc' }, audio: { type: 'tones', tones: [{ hz: 350, seconds: 6 }] } },
    join(config.varDir, 'test', 'clips'),
  );
  publisher = publish(clip, rtmp.url('stalled'));
  await waitForStream(rtmp.url('stalled'));
  services = await startServices({ name: NAME, hosts: 2, env: serviceEnv() });
  nc = await connect({ servers: process.env.NATS_URL, maxReconnectAttempts: -1 });
  records = await SessionRecords.open(jetstream(nc), createLog({ ...config, logLevel: 'silent' }), config.natsReplicas);
});

test.after(async () => {
  if (stopped) process.kill(stopped.pid, 'SIGCONT');
  await proxy?.restore();
  records?.close();
  await nc?.close();
  await services?.stop();
  await publisher?.stop();
  await rtmp?.stop();
  await clickhouse?.close();
  await clickhouseServer?.stop();
  await proxy?.close();
});

test('a host paused past the takeover comes back fenced: one ffmpeg, one row a second, the owner stays', async () => {
  const uri = rtmp.url('stalled');
  const created = await services.api('POST', '/v1/sessions', { body: { name: 'stalled', streamUri: uri } });
  assert.is(created.status, 201);
  const id = created.body._id as string;
  await services.waitForSession(id, (s) => s.meta.workerState === 'working' && s.meta.mediaSeconds >= 3);
  const owner = services.hosts.find((host) => pullersUnder(id, host.pid).length > 0);
  const survivor = services.hosts.find((host) => host !== owner);
  assert.ok(owner && survivor, 'one host pulls the stream');
  assert.is((await records.fresh(id))?.record.owner, hostId(owner!));

  process.kill(owner!.pid, 'SIGSTOP');
  stopped = owner;
  await waitUntil('the other host to take over', async () => (await records.fresh(id))?.record.owner === hostId(survivor!), 60_000);
  assert.is((await records.fresh(id))?.record.epoch, 1, 'the takeover began a new epoch');
  await waitUntil('the new owner to pull', async () => pullersUnder(id, survivor!.pid).length === 1, 60_000);
  await services.waitForSession(id, (s) => s.meta.workerState === 'working', 60_000);
  await sleep(2000);
  assert.is(pullersUnder(id, owner!.pid).length, 1, 'the paused host still has its ffmpeg: two pull the stream');

  process.kill(owner!.pid, 'SIGCONT');
  stopped = undefined;
  const stoppedAfterMs = await assertFenced(id, owner!, survivor!);
  console.log(`paused host: ffmpeg stopped ${stoppedAfterMs} ms after it ran again`);
});

test('a host cut off from NATS past the takeover, analysing on, comes back fenced', async () => {
  await services.stop();
  const natsPort = Number(new URL(process.env.NATS_URL!).port);
  proxy = await startTcpProxy({ host: '127.0.0.1', port: natsPort });
  const name = `${NAME}-cut`;
  services = await startServices({ name, hosts: 0, env: serviceEnv() });
  hostId = (host: Service) => `${name}-host-${services.hosts.indexOf(host) + 1}`;
  // The session is created while the host behind the proxy is the only one.
  const cutHost = await services.startHost({ NATS_URL: `nats://127.0.0.1:${proxy.port}` });
  const uri = rtmp.url('stalled');
  const created = await services.api('POST', '/v1/sessions', { body: { name: 'cut off', streamUri: uri } });
  assert.is(created.status, 201);
  const id = created.body._id as string;
  await services.waitForSession(id, (s) => s.meta.workerState === 'working' && s.meta.mediaSeconds >= 3);
  const other = await services.startHost();
  assert.is((await records.fresh(id))?.record.owner, hostId(cutHost));
  const fencedBefore = await fencedRows();

  await proxy.cut();
  await waitUntil('the other host to take over', async () => (await records.fresh(id))?.record.owner === hostId(other), 60_000);
  assert.is((await records.fresh(id))?.record.epoch, 1, 'the takeover began a new epoch');
  await waitUntil('the new owner to pull', async () => pullersUnder(id, other.pid).length === 1, 60_000);
  await services.waitForSession(id, (s) => s.meta.workerState === 'working', 60_000);
  // The cut-off host, unaware, analyses on: rows of the new owner's seconds, waiting in it.
  await sleep(3000);
  assert.is(pullersUnder(id, cutHost.pid).length, 1, 'the cut-off host still pulls: two pull the stream');

  await proxy.restore();
  const stoppedAfterMs = await assertFenced(id, cutHost, other);
  console.log(`cut-off host: ffmpeg stopped ${stoppedAfterMs} ms after NATS was back`);
  assert.ok((await fencedRows()) > fencedBefore, 'the fence refused the stale owner\'s rows');
});

test.run();

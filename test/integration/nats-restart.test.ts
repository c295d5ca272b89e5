// NATS restarts under a running session: the processes reconnect, the session carries on, and
// the rows made while NATS was away are published once it is back, each second stored once. The
// file runs its own ClickHouse, merging nothing, so that a second stored twice is still there
// to be counted (test/support/copies.ts). A row published again after the restart, as a host
// whose acknowledgement was lost does, is taken by the restarted stream a second time, and the
// writer stores it once all the same.
import { join } from 'node:path';
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { finishWithRetries } from '../../actors/session/lifecycle.ts';
import { SessionRecords } from '../../bus/session-records.ts';
import { readConfig } from '../../bus/config.ts';
import { connectBus } from '../../bus/connection.ts';
import { activeSessionRecord } from '../support/session-record.ts';
import { createLog } from '../../bus/log.ts';
import { newSessionId, rowMessageId } from '../../bus/ids.ts';
import { streams, subjects, tenantOf } from '../../bus/subjects.ts';
import { audioRow } from '../support/audio-row.ts';
import { startClickHouse } from '../../ops/stack/clickhouse.ts';
import { startNats } from '../../ops/stack/nats.ts';
import { waitUntil, type Service } from '../../ops/stack/process.ts';
import { connectClickHouse, queryRows, type ClickHouseClient } from '../../storage/clickhouse/clickhouse.ts';
import { sql } from '../../storage/clickhouse/sql.ts';
import { makeClip } from '../support/clips.ts';
import { assertNoMerges, NO_MERGES, storedTwice } from '../support/copies.ts';
import { freePort } from '../../ops/stack/ports.ts';
import { startServices, type Services } from '../../ops/support/services.ts';
import { startRtmpServer, type RtmpServer } from '../../ops/support/streams/rtmp-server.ts';
import { publish, waitForStream, type Publisher } from '../../ops/support/streams/publish.ts';

const config = readConfig();

const dir = join(config.varDir, 'test', 'streams', `nats-restart-${process.pid}`);
let natsPort: number;
let nats: Service;
let clickhouseServer: Service & { url: string };
let clickhouse: ClickHouseClient;
let services: Services;
let rtmp: RtmpServer;
let publisher: Publisher;

test.before(async () => {
  natsPort = await freePort();
  nats = await startNats({ dir: join(dir, 'nats'), port: natsPort, maxFileStore: '1GB' });
  clickhouseServer = await startClickHouse({ dir: join(dir, 'clickhouse'), httpPort: await freePort(), tcpPort: await freePort(), configFiles: NO_MERGES });
  clickhouse = connectClickHouse({ url: clickhouseServer.url, username: 'default', password: '' }, config.clickhouseDatabase);
  rtmp = await startRtmpServer({ dir: join(dir, 'rtmp'), rtmpPort: await freePort(), rtmpsPort: await freePort() });
  const clip = await makeClip(
    { width: 640, height: 360, seconds: 6, fps: 15, container: 'flv', video: { type: 'testsrc' }, audio: { type: 'tones', tones: [{ hz: 250, seconds: 6 }] } },
    join(config.varDir, 'test', 'clips'),
  );
  publisher = publish(clip, rtmp.url('restart'));
  await waitForStream(rtmp.url('restart'));
  services = await startServices({
    name: 'nats-restart',
    env: { NATS_URL: `nats://127.0.0.1:${natsPort}`, CLICKHOUSE_URL: clickhouseServer.url, ROWS_STREAM_MAX_BYTES: String(256 * 1024 ** 2), HEARTBEAT_SECONDS: '1' },
  });
});

test.after(async () => {
  await services?.stop();
  await clickhouse?.close();
  await clickhouseServer?.stop();
  await nats?.stop();
  await publisher?.stop();
  await rtmp?.stop();
});

test('a session outlives a NATS restart and loses no second of audio', async () => {
  const created = await services.api('POST', '/v1/sessions', { body: { name: 'restart', streamUri: rtmp.url('restart') } });
  assert.is(created.status, 201);
  const id = created.body._id as string;
  await services.waitForSession(id, (s) => s.meta.workerState === 'working' && s.meta.mediaSeconds > 3);

  await nats.stop();
  const downAt = Date.now();
  await new Promise((resolve) => setTimeout(resolve, 5000));
  const during = await services.api('GET', `/v1/sessions/${id}`);
  assert.is(during.status, 503, 'without NATS the gateway answers 503');
  nats = await startNats({ dir: join(dir, 'nats'), port: natsPort, maxFileStore: '1GB' });

  const after = await services.waitForSession(id, (s) => Date.parse(s.meta.healthCheck) > downAt + 5000, 30_000);
  assert.is(after.state, 'active');
  assert.is(after.meta.workerState, 'working');

  // Let it run on, then stop and check every second reached ClickHouse exactly once.
  await new Promise((resolve) => setTimeout(resolve, 4000));
  const stopped = await services.api('POST', `/v1/sessions/${id}/stop`);
  assert.is(stopped.status, 200);
  await assertNoMerges(clickhouse);
  // Rows made while NATS was down are published once it is back, not in a fixed order: wait
  // until every second is stored, not only the newest, so only a row really lost fails here.
  let coverage: { first: number; last: number; seconds: number[] } | undefined;
  const missing = () => {
    const stored = new Set(coverage!.seconds.map(Number));
    return Array.from({ length: Number(coverage!.last) - Number(coverage!.first) + 1 }, (_, i) => Number(coverage!.first) + i)
      .filter((second) => !stored.has(second));
  };
  await waitUntil('every second to be written', async () => {
    [coverage] = await queryRows<{ first: number; last: number; seconds: number[] }>(
      clickhouse,
      sql`SELECT min(second) AS first, max(second) AS last, groupUniqArray(second) AS seconds
          FROM audio_seconds WHERE session = ${id}`,
    );
    return !!coverage && Number(coverage.last) >= Math.floor(stopped.body.duration) - 3 && missing().length === 0;
  }, 30_000).catch(() => {});
  assert.ok(coverage, 'no rows');
  const { first, last } = coverage!;
  assert.ok(Number(last) - Number(first) >= 12, `rows cover ${first}..${last}`);
  assert.equal(missing(), [], `no second missing between ${first} and ${last}`);
  // A batch whose acknowledgement was lost comes back after the consumer's ack_wait: counted
  // once the writer has acknowledged everything.
  await services.rowsStored();
  assert.equal(await storedTwice(clickhouse, 'audio_seconds', ['second'], id), [], 'each second stored once');
});

test('a session whose end is written while NATS is down is finished once NATS is back', async () => {
  const quiet = createLog({ logLevel: 'silent', hostId: 'nats-restart' });
  const nc = await connectBus('nats-restart finish', `nats://127.0.0.1:${natsPort}`, quiet);
  try {
    const js = jetstream(nc);
    const records = await SessionRecords.open(js, quiet, 1);
    const record = activeSessionRecord('nats-restart', 'finish while down', 'finisher');
    await records.create(record);

    await nats.stop();
    const finishing = finishWithRetries(records, record.id, 'stream_unreachable', 'no media received', 'finisher', quiet);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    nats = await startNats({ dir: join(dir, 'nats'), port: natsPort, maxFileStore: '1GB' });
    await finishing;

    const after = await records.fresh(record.id);
    assert.is(after?.record.state, 'finished');
    assert.is(after?.record.stopReason, 'stream_unreachable');
  } finally {
    await nc.close();
  }
});

test('a row published again after a restart, its first copy consumed, is taken by the stream again and stored once', async () => {
  const quiet = createLog({ logLevel: 'silent', hostId: 'nats-restart' });
  const nc = await connectBus('nats-restart publish again', `nats://127.0.0.1:${natsPort}`, quiet);
  try {
    const js = jetstream(nc);
    const session = newSessionId();
    const subject = subjects.row(session, tenantOf({ product: 'tests', user: 'again' }), 'audio');
    // As a host sends it, and sends it again when its acknowledgement was lost.
    const send = (second: number) =>
      js.publish(subject, JSON.stringify([audioRow(session, second)]), { msgID: rowMessageId(session, 'audio', second, 0), timeout: 5000 });
    const stored = async (second: number) =>
      Number((await queryRows<{ n: number }>(clickhouse, sql`SELECT count() AS n FROM audio_seconds WHERE session = ${session} AND second = ${second}`))[0]?.n ?? 0);

    await send(1);
    await waitUntil('the first copy stored', async () => (await stored(1)) === 1, 30_000);
    await services.rowsStored();
    assert.ok((await send(1)).duplicate, 'before the restart the stream knows the id');

    const jsm = await jetstreamManager(nc);
    await nats.stop();
    nats = await startNats({ dir: join(dir, 'nats'), port: natsPort, maxFileStore: '1GB' });
    // Published once JetStream answers again, once only: a retried publish might be the copy.
    await waitUntil('JetStream back', async () => (await jsm.streams.info(streams.rows)).state.messages >= 0, 30_000);
    const again = await send(1);
    // The fault: ROWS is a work queue, the first copy was consumed and deleted, and the restarted
    // server's duplicate window holds only the ids of messages it still has (nats-server#3272).
    assert.not.ok(again.duplicate, 'after the restart the stream takes the same id as a new message');

    // A row after it: once stored, the copy before it has been through the writer too.
    await send(2);
    await waitUntil('the row after the copy stored', async () => (await stored(2)) === 1, 30_000);
    await services.rowsStored();
    assert.is(await stored(1), 1, 'the copy is acknowledged, not inserted again');
  } finally {
    await nc.close();
  }
});

test.run();

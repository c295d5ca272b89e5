// A stopped session's meta.mediaSeconds counts all the media it received, not only what the
// last heartbeat had written, in the record and in the list: at least every second of audio
// whose row was stored.
import { join } from 'node:path';
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { readConfig } from '../../bus/config.ts';
import { freePort } from '../../ops/stack/ports.ts';
import { waitUntil } from '../../ops/stack/process.ts';
import { startServices, type Services } from '../../ops/support/services.ts';
import { publish, waitForStream, type Publisher } from '../../ops/support/streams/publish.ts';
import { startRtmpServer, type RtmpServer } from '../../ops/support/streams/rtmp-server.ts';
import { clickHouseServer, connectClickHouse, queryRows, type ClickHouseClient } from '../../storage/clickhouse/clickhouse.ts';
import { sql } from '../../storage/clickhouse/sql.ts';
import { makeClip } from '../support/clips.ts';

const config = readConfig();
// Long, so that the stop lands between two heartbeats even when stored rows lag the stream.
const HEARTBEAT_SECONDS = 8;

let services: Services;
let rtmp: RtmpServer;
let publisher: Publisher;
let clickhouse: ClickHouseClient;

test.before(async () => {
  const dir = join(config.varDir, 'test', 'streams', `sessions-final-media-${process.pid}`);
  rtmp = await startRtmpServer({ dir, rtmpPort: await freePort(), rtmpsPort: await freePort() });
  const clip = await makeClip(
    { width: 320, height: 240, seconds: 6, fps: 10, container: 'flv', video: { type: 'testsrc' }, audio: { type: 'tones', tones: [{ hz: 300, seconds: 6 }] } },
    join(config.varDir, 'test', 'clips'),
  );
  publisher = publish(clip, rtmp.url('final'));
  await waitForStream(rtmp.url('final'));
  services = await startServices({ name: 'sessions-final-media', env: { HEARTBEAT_SECONDS: String(HEARTBEAT_SECONDS), TAKEOVER_SECONDS: String(3 * HEARTBEAT_SECONDS) } });
  clickhouse = connectClickHouse(clickHouseServer(config), config.clickhouseDatabase);
});

test.after(async () => {
  await clickhouse?.close();
  await services?.stop();
  await publisher?.stop();
  await rtmp?.stop();
});

test('a stop between heartbeats: the finished session counts the media received since the last one', async () => {
  const created = await services.api('POST', '/v1/sessions', { body: { name: 'final media', streamUri: rtmp.url('final') } });
  assert.is(created.status, 201);
  const id = created.body._id;
  const working = await services.waitForSession(id, (s) => s.meta.workerState === 'working');
  const beat = await services.waitForSession(id, (s) => s.meta.healthCheck !== working.meta.healthCheck && s.meta.mediaSeconds > 0, (HEARTBEAT_SECONDS + 5) * 1000);
  // A stored second of audio is a second of the session with audio in it, the first maybe only
  // part of one: the seconds stored prove at least their number less one of media received
  // (counted as distinct seconds, not rows: a second stored twice proves no more). The stop
  // waits until they prove well over what the heartbeat wrote, however fast the stream comes.
  const mediaProven = async () =>
    Number((await queryRows<{ n: number }>(clickhouse, sql`SELECT uniqExact(second) AS n FROM audio_seconds WHERE session = ${id}`))[0]?.n ?? 0) - 1;
  await waitUntil('audio rows past the heartbeat', async () => (await mediaProven()) >= beat.meta.mediaSeconds + 1.5, 15_000);
  const stopped = await services.api('POST', `/v1/sessions/${id}/stop`);
  assert.is(stopped.status, 200);
  assert.is(stopped.body.meta.healthCheck, beat.meta.healthCheck, 'stopped before the next heartbeat');
  const received = await mediaProven();
  await waitUntil('the final media count', async () => (await services.api('GET', `/v1/sessions/${id}`)).body.meta.mediaSeconds >= received, 10_000)
    .catch(async (error: Error) => assert.unreachable(`${error.message}: the heartbeat counted ${beat.meta.mediaSeconds} s, rows prove ${received} s,` +
      ` the record says ${(await services.api('GET', `/v1/sessions/${id}`)).body.meta.mediaSeconds} s`));
  const final = (await services.api('GET', `/v1/sessions/${id}`)).body;
  assert.is(final.state, 'finished');
  assert.is(final.meta.workerState, 'stopped');
  const listed = await services.api('GET', '/v1/sessions?state=finished&limit=100');
  const entry = listed.body.data.find((s: { _id: string }) => s._id === id);
  assert.is(entry?.meta.mediaSeconds, final.meta.mediaSeconds, 'the list shows the final count');
});

test.run();

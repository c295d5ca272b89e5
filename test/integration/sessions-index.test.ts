// The session index is written when something a list shows changes, never per heartbeat, and a
// list still shows the latest heartbeat: the storage service follows the session records.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { readConfig } from '../../bus/config.ts';
import { connectClickHouse, queryRows, type ClickHouseClient, clickHouseServer } from '../../storage/clickhouse/clickhouse.ts';
import { sql } from '../../storage/clickhouse/sql.ts';
import { freePort } from '../../ops/stack/ports.ts';
import { waitUntil } from '../../ops/stack/process.ts';
import { makeClip } from '../support/clips.ts';
import { startServices, type Services } from '../../ops/support/services.ts';
import { publish, waitForStream, type Publisher } from '../../ops/support/streams/publish.ts';
import { startRtmpServer, type RtmpServer } from '../../ops/support/streams/rtmp-server.ts';

const config = readConfig();

let services: Services;
let rtmp: RtmpServer;
let publisher: Publisher;
let clickhouse: ClickHouseClient;

test.before(async () => {
  const dir = join(config.varDir, 'test', 'streams', `sessions-index-${process.pid}`);
  rtmp = await startRtmpServer({ dir, rtmpPort: await freePort(), rtmpsPort: await freePort() });
  const clip = await makeClip(
    { width: 320, height: 240, seconds: 6, fps: 10, container: 'flv', video: { type: 'testsrc' }, audio: { type: 'tones', tones: [{ hz: 300, seconds: 6 }] } },
    join(config.varDir, 'test', 'clips'),
  );
  publisher = publish(clip, rtmp.url('index'));
  await waitForStream(rtmp.url('index'));
  services = await startServices({ name: 'sessions-index', env: { HEARTBEAT_SECONDS: '0.5' } });
  clickhouse = connectClickHouse(clickHouseServer(config), config.clickhouseDatabase);
});

test.after(async () => {
  await clickhouse?.close();
  await services?.stop();
  await publisher?.stop();
  await rtmp?.stop();
});

// The newest revision the index holds, and its worker state: merges may fold older rows away,
// but a row written for a heartbeat would raise it (every KV write, heartbeats too, raises the
// revision).
async function indexed(id: string): Promise<{ revision: number; workerState?: string }> {
  const [row] = await queryRows<{ n: number; doc: string }>(
    clickhouse,
    sql`SELECT max(revision) AS n, argMax(doc, revision) AS doc FROM sessions WHERE id = ${id}`,
  );
  return { revision: Number(row?.n), workerState: row?.doc ? JSON.parse(row.doc).workerState : undefined };
}
const indexedRevision = async (id: string) => (await indexed(id)).revision;

test('heartbeats add no index rows; create, rename, worker state and stop do, and the list shows the latest', async () => {
  const created = await services.api('POST', '/v1/sessions', { body: { name: 'indexed', streamUri: rtmp.url('index') } });
  assert.is(created.status, 201);
  const id = created.body._id;
  await services.waitForSession(id, (s) => s.meta.workerState === 'working');
  // The record says working a moment before the index does: the index follows the bucket, a
  // moment that an insert into a loaded ClickHouse (on the cluster, a replicated one) stretches.
  await waitUntil('working in the index', async () => (await indexed(id)).workerState === 'working', 60_000);
  const working = await indexedRevision(id);
  const before = await services.api('GET', `/v1/sessions/${id}`);
  // Six heartbeats.
  await waitUntil('heartbeats', async () => {
    const now = await services.api('GET', `/v1/sessions/${id}`);
    return Date.parse(now.body.meta.healthCheck) - Date.parse(before.body.meta.healthCheck) >= 3000;
  }, 15_000);
  assert.is(await indexedRevision(id), working, 'no row per heartbeat');
  const listed = await services.api('GET', '/v1/sessions?state=active');
  const entry = listed.body.data.find((s: { _id: string }) => s._id === id);
  assert.ok(Date.parse(entry.meta.healthCheck) - Date.parse(before.body.meta.healthCheck) >= 3000, 'the list shows the latest heartbeat');
  assert.ok(entry.meta.mediaSeconds > before.body.meta.mediaSeconds);

  const renamed = await services.api('PATCH', `/v1/sessions/${id}`, { body: { name: 'renamed' } });
  assert.is(renamed.status, 200);
  await waitUntil('the rename in the index', async () => (await indexedRevision(id)) > working, 60_000);
  const afterRename = await services.api('GET', '/v1/sessions?limit=100');
  assert.is(afterRename.body.data.find((s: { _id: string }) => s._id === id).name, 'renamed', 'visible when the rename returns');
  const stopped = await services.api('POST', `/v1/sessions/${id}/stop`);
  assert.is(stopped.status, 200);
  const finished = await services.api('GET', '/v1/sessions?state=finished&limit=100');
  assert.ok(finished.body.data.some((s: { _id: string }) => s._id === id), 'visible as finished when the stop returns');
  const active = await services.api('GET', '/v1/sessions?state=active&limit=100');
  assert.not.ok(active.body.data.some((s: { _id: string }) => s._id === id));
});

test.run();

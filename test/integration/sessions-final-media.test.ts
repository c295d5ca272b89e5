// A stopped session's meta.mediaSeconds counts all the media it received, not only what the
// last heartbeat had written, in the record and in the list.
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readConfig } from '../../bus/config.ts';
import { freePort } from '../../ops/stack/ports.ts';
import { waitUntil } from '../../ops/stack/process.ts';
import { startServices, type Services } from '../../ops/support/services.ts';
import { publish, waitForStream, type Publisher } from '../../ops/support/streams/publish.ts';
import { startRtmpServer, type RtmpServer } from '../../ops/support/streams/rtmp-server.ts';
import { makeClip } from '../support/clips.ts';

const config = readConfig();
// Long, so that a stop lands well after the last heartbeat.
const HEARTBEAT_SECONDS = 4;

let services: Services;
let rtmp: RtmpServer;
let publisher: Publisher;

test.before(async () => {
  const dir = join(config.varDir, 'test', 'streams', `sessions-final-media-${process.pid}`);
  rtmp = await startRtmpServer({ dir, rtmpPort: await freePort(), rtmpsPort: await freePort() });
  const clip = await makeClip(
    { width: 320, height: 240, seconds: 6, fps: 10, container: 'flv', video: { type: 'testsrc' }, audio: { type: 'tones', tones: [{ hz: 300, seconds: 6 }] } },
    join(config.varDir, 'test', 'clips'),
  );
  publisher = publish(clip, rtmp.url('final'));
  await waitForStream(rtmp.url('final'));
  services = await startServices({ name: 'sessions-final-media', env: { HEARTBEAT_SECONDS: String(HEARTBEAT_SECONDS) } });
});

test.after(async () => {
  await services?.stop();
  await publisher?.stop();
  await rtmp?.stop();
});

test('a stop between heartbeats: the finished session counts the media received since the last one', async () => {
  const created = await services.api('POST', '/v1/sessions', { body: { name: 'final media', streamUri: rtmp.url('final') } });
  assert.is(created.status, 201);
  const id = created.body._id;
  const working = await services.waitForSession(id, (s) => s.meta.workerState === 'working');
  await services.waitForSession(id, (s) => s.meta.healthCheck !== working.meta.healthCheck && s.meta.mediaSeconds > 0, (HEARTBEAT_SECONDS + 5) * 1000);
  // Half a heartbeat later: the record's count is two seconds behind the stream.
  await sleep((HEARTBEAT_SECONDS / 2) * 1000);
  const stopped = await services.api('POST', `/v1/sessions/${id}/stop`);
  assert.is(stopped.status, 200);
  const atStop = stopped.body.meta.mediaSeconds as number;
  await waitUntil('the final media count', async () => (await services.api('GET', `/v1/sessions/${id}`)).body.meta.mediaSeconds >= atStop + 1.5, 10_000);
  const final = (await services.api('GET', `/v1/sessions/${id}`)).body;
  assert.is(final.state, 'finished');
  assert.is(final.meta.workerState, 'stopped');
  const listed = await services.api('GET', '/v1/sessions?state=finished&limit=100');
  const entry = listed.body.data.find((s: { _id: string }) => s._id === id);
  assert.is(entry?.meta.mediaSeconds, final.meta.mediaSeconds, 'the list shows the final count');
});

test.run();

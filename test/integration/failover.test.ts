// Two actor hosts; the one that owns a session is killed with SIGKILL; the other takes the
// session over from the KV and restarts its worker.
import { join } from 'node:path';
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { readConfig } from '../../bus/config.ts';
import { waitUntil } from '../../ops/stack/process.ts';
import { makeClip } from '../support/clips.ts';
import { pullersOf } from '../support/pullers.ts';
import { freePort } from '../../ops/stack/ports.ts';
import { startServices, type Services } from '../../ops/support/services.ts';
import { startRtmpServer, type RtmpServer } from '../../ops/support/streams/rtmp-server.ts';
import { publish, waitForStream, type Publisher } from '../../ops/support/streams/publish.ts';

const config = readConfig();

let services: Services;
let rtmp: RtmpServer;
let publisher: Publisher;

test.before(async () => {
  const dir = join(config.varDir, 'test', 'streams', `failover-${process.pid}`);
  rtmp = await startRtmpServer({ dir, rtmpPort: await freePort(), rtmpsPort: await freePort() });
  const clip = await makeClip(
    { width: 640, height: 360, seconds: 6, fps: 15, container: 'flv', video: { type: 'testsrc' }, audio: { type: 'tones', tones: [{ hz: 300, seconds: 6 }] } },
    join(config.varDir, 'test', 'clips'),
  );
  publisher = publish(clip, rtmp.url('failover'));
  await waitForStream(rtmp.url('failover'));
  services = await startServices({ name: 'failover', hosts: 2, env: { HEARTBEAT_SECONDS: '1', TAKEOVER_SECONDS: '4' } });
});

test.after(async () => {
  await services?.stop();
  await publisher?.stop();
  await rtmp?.stop();
});

test('kill -9 of the owning host: the other host takes the session over', async () => {
  const uri = rtmp.url('failover');
  const created = await services.api('POST', '/v1/sessions', { body: { name: 'failover', streamUri: uri } });
  assert.is(created.status, 201);
  const id = created.body._id as string;
  // Wait for two heartbeats with media, so the record holds a count worth keeping.
  const before = await services.waitForSession(id, (s) => s.meta.workerState === 'working' && s.meta.mediaSeconds >= 2);
  const [puller] = pullersOf(id);
  const owner = services.hosts.find((host) => host.pid === puller?.host);
  const survivor = services.hosts.find((host) => host !== owner);
  assert.ok(owner && survivor, 'one host runs the worker');

  process.kill(owner!.pid, 'SIGKILL');
  const killedAt = Date.now();
  // Long enough to tell a takeover that never comes from a slow machine (TAKEOVER_SECONDS is 4).
  await waitUntil('takeover', async () => pullersOf(id).some((p) => p.host === survivor!.pid), 60_000);
  const after = await services.waitForSession(before._id, (s) => s.meta.workerState === 'working', 60_000);
  assert.is(after.state, 'active');
  assert.is(after._id, before._id);
  assert.is(after.timestamp, before.timestamp);
  assert.is(after.user, before.user);
  assert.ok(Date.parse(after.meta.healthCheck) > killedAt, 'heartbeats resumed');
  // The count of media received survives the takeover: it goes on, never back.
  const resumed = await services.waitForSession(before._id, (s) => Date.parse(s.meta.healthCheck) > Date.parse(after.meta.healthCheck));
  assert.ok(resumed.meta.mediaSeconds >= before.meta.mediaSeconds, `${resumed.meta.mediaSeconds} >= ${before.meta.mediaSeconds}`);
  // The dead host's ffmpeg loses its reader and exits by itself.
  await waitUntil('orphaned ffmpeg to exit', async () => !pullersOf(id).some((p) => p.pid === puller!.pid), 15_000);
});

test.run();

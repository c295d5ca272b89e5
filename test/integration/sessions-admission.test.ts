// Admission by reserved cost (actors/host-room.ts): a new session reserves the cost of the
// heaviest stream the host is sized for until its own cost has been measured, and gives it back
// the moment it stops. An idle host takes a run of creates; a client that creates and stops
// back to back is never refused; a full host answers 503 with when it expects room.
import { join } from 'node:path';
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { readConfig } from '../../bus/config.ts';
import { makeClip } from '../support/clips.ts';
import { startStreamServer } from '../support/analysis.ts';
import { startServices, type Services } from '../../ops/support/services.ts';
import { publish, waitForStream, type Publisher } from '../../ops/support/streams/publish.ts';
import type { RtmpServer } from '../../ops/support/streams/rtmp-server.ts';

const config = readConfig();
/** Nothing listens there: a session on it waits for media, its cost unknown, holding its reservation. */
const SILENT_STREAM = 'rtmp://127.0.0.1:9/live/x';
let services: Services;
let rtmp: RtmpServer;
let publisher: Publisher;
let live: string;

test.before(async () => {
  // The defaults: HOST_CAPACITY 10 on this machine's cores.
  services = await startServices({ name: 'sessions-admission', env: { STREAM_UNREACHABLE_SECONDS: '900' } });
  rtmp = await startStreamServer('sessions-admission');
  const clip = await makeClip(
    { width: 320, height: 240, seconds: 10, fps: 10, container: 'flv', video: { type: 'testsrc' }, audio: { type: 'tones', tones: [{ hz: 300, seconds: 10 }] } },
    join(config.varDir, 'test', 'clips'),
  );
  live = rtmp.url('admission');
  publisher = publish(clip, live);
  await waitForStream(live);
});

test.after(async () => {
  await publisher?.stop();
  await rtmp?.stop();
  await services?.stop();
});

const create = (name: string, streamUri: string, token: string) =>
  services.api('POST', '/v1/sessions', { body: { name, streamUri }, token });
const stop = (id: string, token: string) => services.api('POST', `/v1/sessions/${id}/stop`, { token });
const active = async (token: string) =>
  (await services.api('GET', '/v1/sessions?limit=100&state=active', { token })).body.data.length as number;

test('a client creating and stopping sessions back to back is never refused, nor is another user meanwhile', async () => {
  const { alice, bob } = services.users;
  for (let i = 0; i < 12; i++) {
    const created = await create(`churn ${i}`, live, alice.token);
    assert.is(created.status, 201, `create ${i}: ${JSON.stringify(created.body)}`);
    assert.is((await stop(created.body._id, alice.token)).status, 200);
  }
  const other = await create('beside the churn', live, bob.token);
  assert.is(other.status, 201, JSON.stringify(other.body));
  assert.is((await stop(other.body._id, bob.token)).status, 200);
});

const cameras: string[] = [];

test('an idle host takes at least 8 creates in a row, each on a live stream', async () => {
  const { alice } = services.users;
  for (let i = 0; i < 8; i++) {
    const created = await create(`camera ${i}`, live, alice.token);
    assert.is(created.status, 201, `create ${i}: ${JSON.stringify(created.body)}`);
    cameras.push(created.body._id);
  }
  for (const id of cameras) await services.waitForSession(id, (session) => session.meta?.workerState === 'working', 60_000);
});

test('a full host answers 503 with a Retry-After, creates nothing, and takes a create again when that has passed', async () => {
  const { alice, bob } = services.users;
  const before = await active(bob.token);
  const held: string[] = [];
  let refused;
  for (let i = 0; i < 20 && !refused; i++) {
    const created = await create(`waiting ${i}`, SILENT_STREAM, bob.token);
    if (created.status === 201) held.push(created.body._id);
    else refused = created;
  }
  assert.ok(refused, 'the host never filled up');
  assert.is(refused.status, 503, JSON.stringify(refused.body));
  assert.equal([refused.body.status, refused.body.code], [503, 'overloaded']);
  assert.is(await active(bob.token), before + held.length, 'the refused request created nothing');

  // Room comes back as the sessions stop: when the reservations they held are given back (at
  // once), their measured load has left the window, and a host that was behind keeps up again.
  for (const id of held) assert.is((await stop(id, bob.token)).status, 200);
  for (const id of cameras) assert.is((await stop(id, alice.token)).status, 200);
  for (let attempt = 0; ; attempt++) {
    const retryAfter = Number(refused.headers.get('retry-after'));
    // A reservation ends within its 10 s window, a host behind keeps up again within 20 s.
    assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 20, `Retry-After: ${refused.headers.get('retry-after')}`);
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000));
    const again = await create('after the stops', SILENT_STREAM, bob.token);
    if (again.status === 201) break;
    assert.ok(attempt < 3, `still refused after ${attempt + 1} tries as told: ${JSON.stringify(again.body)}`);
    refused = again;
  }
});

test.run();

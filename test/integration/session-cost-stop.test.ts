// A session that stays far over its budget is stopped with its own reason, and it alone
// (actors/session-budgets.ts). With SESSION_BUDGET_CORES at 0.02 cores, alice's 1080p stream at
// 30 fps (its decoding alone about 0.16 cores here, which no face effort lowers) stays over three
// budgets and is stopped as `cost_exceeded` STOP_SECONDS after it was first measured; bob's small
// stream beside it, under three budgets, keeps working, and his rows keep coming.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { readConfig } from '../../bus/config.ts';
import { clipsDir, startStreamServer } from '../support/analysis.ts';
import { makeClip } from '../support/clips.ts';
import { startServices, type Services } from '../../ops/support/services.ts';
import { publish, waitForStream, type Publisher } from '../../ops/support/streams/publish.ts';
import type { RtmpServer } from '../../ops/support/streams/rtmp-server.ts';

const config = readConfig();
const BUDGET_CORES = 0.02;
/** actors/session-budgets.ts: STOP_PAST_BUDGETS. */
const STOPPED_PAST_CORES = 3 * BUDGET_CORES;
/** SESSION_OVER_BUDGET_STOP_SECONDS: shorter than the minute of production, for the test's time. */
const STOP_SECONDS = 12;

let services: Services;
let rtmp: RtmpServer;
const publishers: Publisher[] = [];
const streams = { heavy: '', light: '' };

test.before(async () => {
  rtmp = await startStreamServer('session-cost-stop');
  const tone = { type: 'tones' as const, tones: [{ hz: 300, seconds: 10 }] };
  const [heavy, light] = await Promise.all([
    makeClip({ width: 1920, height: 1080, seconds: 10, fps: 30, container: 'flv', video: { type: 'testsrc' }, audio: tone }, clipsDir),
    makeClip({ width: 160, height: 120, seconds: 10, fps: 5, container: 'flv', video: { type: 'testsrc' }, audio: { type: 'none' } }, clipsDir),
  ]);
  streams.heavy = rtmp.url('heavy');
  streams.light = rtmp.url('light');
  publishers.push(publish(heavy, streams.heavy, config.ffmpegPath), publish(light, streams.light, config.ffmpegPath));
  await Promise.all(Object.values(streams).map((uri) => waitForStream(uri)));
  services = await startServices({
    name: 'session-cost-stop',
    env: { SESSION_BUDGET_CORES: String(BUDGET_CORES), SESSION_OVER_BUDGET_STOP_SECONDS: String(STOP_SECONDS), STREAM_UNREACHABLE_SECONDS: '900' },
  });
});

test.after(async () => {
  await services?.stop();
  await Promise.all(publishers.map((publisher) => publisher.stop()));
  await rtmp?.stop();
});

test("a session over three budgets for a while is stopped as cost_exceeded; another user's light session beside it goes on", async () => {
  const { alice, bob } = services.users;
  const create = (name: string, streamUri: string, token: string) => services.api('POST', '/v1/sessions', { body: { name, streamUri }, token });
  const [heavy, light] = await Promise.all([create('heavy', streams.heavy, alice.token), create('light', streams.light, bob.token)]);
  assert.is(heavy.status, 201, JSON.stringify(heavy.body));
  assert.is(light.status, 201, JSON.stringify(light.body));

  // Its cost as its heartbeats showed it: measured past three budgets before the stop.
  let heaviest = 0;
  const ended = await services.waitForSession(
    heavy.body._id,
    (session) => {
      heaviest = Math.max(heaviest, session.meta?.cpuCores ?? 0);
      return session.state === 'finished';
    },
    150_000,
    alice.token,
  );
  assert.is(ended.meta.stopReason, 'cost_exceeded', JSON.stringify(ended.meta));
  assert.is(ended.meta.workerState, 'failed');
  assert.match(ended.meta.failure, new RegExp(`over 3 times its budget of 0\\.02, for ${STOP_SECONDS} s`));
  assert.ok(heaviest > STOPPED_PAST_CORES, `the heavy session showed at most ${heaviest} cores`);
  assert.ok(ended.meta.mediaSeconds >= STOP_SECONDS, `stopped after ${ended.meta.mediaSeconds} s of media, before ${STOP_SECONDS} s past its budget`);

  // Bob's session was measured all along, under three budgets, and is still analysed.
  const before = await services.waitForSession(light.body._id, (session) => session.meta?.workerState === 'working' && session.meta.cpuCores !== undefined, 30_000, bob.token);
  assert.is(before.state, 'active');
  assert.ok(before.meta.cpuCores < STOPPED_PAST_CORES, `the light session costs ${before.meta.cpuCores} cores`);
  const after = await services.waitForSession(light.body._id, (session) => session.meta.mediaSeconds >= before.meta.mediaSeconds + 5, 30_000, bob.token);
  assert.is(after.state, 'active');
  assert.is((await services.api('POST', `/v1/sessions/${light.body._id}/stop`, { token: bob.token })).status, 200);
});

test.run();

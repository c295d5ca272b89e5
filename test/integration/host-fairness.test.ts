// One session, one cost (actors/host-room.ts, host-load.ts, session-cost.ts): what one user's
// streams do shows in their own sessions, not in another user's answers or analysis. An idle
// host takes eight creates of 720p streams within 30 s and then a ninth and tenth, each with
// its own answer; one user's sessions on streams pushed twenty times faster than real time
// leave another user's create answered at once, and its analysis is lowered, if the machine is
// busy at all, only after theirs. Real NATS, ClickHouse, nginx-rtmp, ffmpeg and an actor host
// with the default HOST_CAPACITY.
import type { NatsConnection } from '@nats-io/transport-node';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import type { VideoSecond } from '../../bus/contracts/rows.ts';
import { readConfig } from '../../bus/config.ts';
import { connectBus } from '../../bus/connection.ts';
import { createLog } from '../../bus/log.ts';
import { subjects, tenantOf } from '../../bus/subjects.ts';
import { waitUntil } from '../../ops/stack/process.ts';
import { parsePrometheusText, total } from '../../ops/support/prometheus-text.ts';
import { startServices, type Services } from '../../ops/support/services.ts';
import { publish, TOO_FAST, waitForStream, type Publisher } from '../../ops/support/streams/publish.ts';
import type { RtmpServer } from '../../ops/support/streams/rtmp-server.ts';
import { clipsDir, startStreamServer } from '../support/analysis.ts';
import { makeClip } from '../support/clips.ts';
import { httpRequest } from '../../ops/stack/http-client.ts';

const config = readConfig();
let services: Services;
let rtmp: RtmpServer;
let nc: NatsConnection;
const publishers: Publisher[] = [];
const streams = { live720: '', small: '', oversize: '', tooFast: '', tooFastToo: '' };

test.before(async () => {
  rtmp = await startStreamServer('host-fairness');
  const tone = { type: 'tones' as const, tones: [{ hz: 300, seconds: 10 }] };
  const [live720, silent720, small, oversize] = await Promise.all([
    makeClip({ width: 1280, height: 720, seconds: 10, fps: 15, container: 'flv', video: { type: 'testsrc' }, audio: tone }, clipsDir),
    // nginx-rtmp stalls the audio of a publisher pushing far faster than real time after some 25 s: video only.
    makeClip({ width: 1280, height: 720, seconds: 10, fps: 15, container: 'flv', video: { type: 'testsrc' }, audio: { type: 'none' } }, clipsDir),
    makeClip({ width: 320, height: 240, seconds: 10, fps: 15, container: 'flv', video: { type: 'testsrc' }, audio: tone }, clipsDir),
    // Above the 1080p limit: a session on it must end as resolution_exceeded.
    makeClip({ width: 2560, height: 1440, seconds: 4, fps: 5, container: 'flv', video: { type: 'testsrc' }, audio: { type: 'none' } }, clipsDir),
  ]);
  streams.live720 = rtmp.url('live720');
  streams.small = rtmp.url('small');
  streams.oversize = rtmp.url('oversize');
  streams.tooFast = rtmp.url('too-fast');
  streams.tooFastToo = rtmp.url('too-fast-too');
  publishers.push(
    publish(live720, streams.live720, config.ffmpegPath),
    publish(small, streams.small, config.ffmpegPath),
    publish(oversize, streams.oversize, config.ffmpegPath),
    publish(silent720, streams.tooFast, config.ffmpegPath, TOO_FAST),
    publish(silent720, streams.tooFastToo, config.ffmpegPath, TOO_FAST),
  );
  await Promise.all(Object.values(streams).map((uri) => waitForStream(uri)));
  // The defaults that matter here: HOST_CAPACITY and the user quota of 8 active sessions.
  services = await startServices({ name: 'host-fairness', env: { STREAM_UNREACHABLE_SECONDS: '900' } });
  nc = await connectBus('host-fairness test', config.natsUrl, createLog(config));
});

test.after(async () => {
  await nc?.close();
  await services?.stop();
  await Promise.all(publishers.map((publisher) => publisher.stop()));
  await rtmp?.stop();
});

/** The face thread's steps down, in the order the host logged them. */
/** In the host log's order: each lowering of a stream's face effort, and each session's end. */
type Weighed = { session: string; level: number; floor: number; work: number };
type EffortStep = { session: string; level: number; chosenAmong?: Weighed[] } | { session: string; ended: true };

function effortSteps(log: string): EffortStep[] {
  return log
    .split('\n')
    .filter((line) => line.includes('face analysis behind: reduced effort for a stream') || line.includes('"msg":"session ends"'))
    .map((line) => JSON.parse(line) as { session: string; stepsBelowFull?: number; chosenAmong?: Weighed[] })
    .map(({ session, stepsBelowFull, chosenAmong }) => (stepsBelowFull === undefined ? { session, ended: true as const } : { session, level: stepsBelowFull, chosenAmong }));
}

const create = (name: string, streamUri: string, token: string) => services.api('POST', '/v1/sessions', { body: { name, streamUri }, token });
const stopAll = async (ids: string[], token: string) => {
  for (const id of ids) await services.api('POST', `/v1/sessions/${id}/stop`, { token });
};
const working = (id: string, token: string) =>
  services.waitForSession(id, (session) => session.meta?.workerState === 'working' && session.meta.mediaSeconds > 2, 90_000, token);

test('an idle host takes eight 720p creates within 30 s, then a ninth and tenth each get their own answer', async () => {
  const { alice, bob } = services.users;
  const started = Date.now();
  const ids: string[] = [];
  for (let i = 0; i < 8; i++) {
    const created = await create(`720p ${i}`, streams.live720, alice.token);
    assert.is(created.status, 201, `create ${i}: ${JSON.stringify(created.body)}`);
    ids.push(created.body._id);
  }
  assert.ok(Date.now() - started < 30_000, 'the eight creates were answered within 30 s');
  for (const id of ids) await working(id, alice.token);

  // Another user's two more: one that works, one whose picture is over the limit. Each is the
  // host's own decision about that stream, not a 503 for the load of the eight.
  const ninth = await create('ninth', streams.live720, bob.token);
  assert.is(ninth.status, 201, JSON.stringify(ninth.body));
  const tenth = await create('tenth, too large', streams.oversize, bob.token);
  assert.is(tenth.status, 201, JSON.stringify(tenth.body));
  await working(ninth.body._id, bob.token);
  const ended = await services.waitForSession(tenth.body._id, (session) => session.state === 'finished', 60_000, bob.token);
  assert.is(ended.meta.stopReason, 'resolution_exceeded');

  // Each running session shows its own cost, measured once it has worked for a window.
  const costs = await Promise.all(
    ids.map((id) => services.waitForSession(id, (session) => typeof session.meta?.cpuCores === 'number', 30_000, alice.token)),
  );
  for (const session of costs) assert.ok(session.meta.cpuCores > 0 && session.meta.cpuCores < 2, `meta.cpuCores ${session.meta.cpuCores}`);
  await stopAll(ids, alice.token);
  await stopAll([ninth.body._id], bob.token);
});

test("one user's sessions on streams pushed far faster than real time leave another user's create and analysis as they were", async () => {
  const { alice, bob } = services.users;
  // From a host that keeps up: the ten sessions before may have left it behind for a while.
  const behind = async () => total(parsePrometheusText(await (await httpRequest(`${services.metrics.hosts[0]}/metrics`)).text), 'emo_host_behind');
  await waitUntil('the host keeping up', async () => (await behind()) === 0, 60_000);
  const heavy: string[] = [];
  for (const [name, uri] of [['too fast', streams.tooFast], ['too fast too', streams.tooFastToo]] as const) {
    const created = await create(name, uri, bob.token);
    assert.is(created.status, 201, JSON.stringify(created.body));
    heavy.push(created.body._id);
  }
  for (const id of heavy) await working(id, bob.token);

  // Bob's media comes as fast as his host reads it; alice creates while it does.
  const created = await create('beside the streams pushed too fast', streams.small, alice.token);
  assert.is(created.status, 201, `answered at once, not asked to wait: ${JSON.stringify(created.body)}`);
  const id = created.body._id;
  const rows: VideoSecond[] = [];
  const subscription = nc.subscribe(subjects.row(id, tenantOf(services.users.alice), 'video'), {
    callback: (_error, msg) => {
      rows.push(...msg.json<VideoSecond[]>());
    },
  });
  await working(id, alice.token);
  await waitUntil('30 of alice\'s video rows', async () => rows.length >= 30, 90_000);
  subscription.unsubscribe();

  // Seconds at either edge of the run may hold part of a second's frames.
  const inner = rows.sort((a, b) => a.second - b.second).slice(2, -1);
  assert.ok(inner.length >= 20, `alice's video rows over 30 s: ${inner.length}`);
  // Frames come at real time; a busy machine may hand one second's frame to the next.
  assert.ok(inner.every((row) => row.frames <= 2 * config.analysisFps), `no second holds a burst: ${JSON.stringify(inner.map((row) => row.frames))}`);
  // Bob's bursts lower nobody; only the face thread truly behind (a machine busy with other
  // work) lowers anyone, and then bob's streams, which cost it more, go to their floor first:
  // alice's is lowered, if at all, only after each of bob's is as low as it goes, or has ended.
  // Bob's stream is out of the way once it has ended or gone to its lowest step, or when the
  // thread, lowering alice's, weighed it at its floor or costing it less than hers (a stream held
  // back to real time between bursts may cost it little). A lowering without the thread's
  // weighing is alice's own cost, over her session's budget, which is hers to bear.
  const steps = effortSteps(readFileSync(join(services.logDir, 'host-fairness-host-1.log'), 'utf8'));
  const alicesFirst = steps.findIndex((step) => step.session === id && 'level' in step);
  const lowering = steps[alicesFirst];
  const weighed = lowering && 'chosenAmong' in lowering ? lowering.chosenAmong : undefined;
  const alicesWork = weighed?.find((stream) => stream.session === id)?.work;
  for (const heavyId of heavy) {
    const floorOrEnd = steps.findIndex((step) => step.session === heavyId && ('ended' in step || step.level === 2));
    const bobs = weighed?.find((stream) => stream.session === heavyId);
    const outOfTheWay = alicesFirst === -1 || weighed === undefined || (floorOrEnd !== -1 && floorOrEnd < alicesFirst) ||
      bobs === undefined || bobs.level >= bobs.floor || (alicesWork !== undefined && bobs.work <= alicesWork);
    assert.ok(outOfTheWay, `alice's stream lowered while bob's ${heavyId} cost the face thread more, above its floor: ${JSON.stringify(steps)}`);
  }

  // Bob's sessions are held to real time and end as too fast; alice's goes on.
  for (const heavyId of heavy) {
    const ended = await services.waitForSession(heavyId, (session) => session.state === 'finished', 120_000, bob.token);
    assert.is(ended.meta.stopReason, 'stream_too_fast');
  }
  const alices = await services.api('GET', `/v1/sessions/${id}`, { token: alice.token });
  assert.is(alices.body.state, 'active');
  assert.is(alices.body.meta.workerState, 'working');
  await stopAll([id], alice.token);
});

test.run();

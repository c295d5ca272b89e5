// Sessions read their streams at real time (actors/ingest/pacing.ts): a clip pushed twenty
// times faster is held to the wall clock and then stopped as stream_too_fast; a live stream, and one
// its server delivers in bursts, keep flowing. Local nginx-rtmp, real ffmpeg, real hosts.
import { createServer, connect, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { PACING_LIMITS } from '../../actors/ingest/pacing.ts';
import { readConfig } from '../../bus/config.ts';
import { connectBus } from '../../bus/connection.ts';
import { createLog } from '../../bus/log.ts';
import { subjects, tenantOf } from '../../bus/subjects.ts';
import { freePort } from '../../ops/stack/ports.ts';
import { startServices, type Services } from '../../ops/support/services.ts';
import { startRtmpServer, type RtmpServer } from '../../ops/support/streams/rtmp-server.ts';
import { publish, TOO_FAST, waitForStream, type Publisher } from '../../ops/support/streams/publish.ts';
import { makeClip } from '../support/clips.ts';

const config = readConfig();
const log = createLog(config);
const clipsDir = join(config.varDir, 'test', 'clips');
const dir = join(config.varDir, 'test', 'streams', `stream-pacing-${process.pid}`);

const FPS = config.analysisFps;
// The proxy's server delivers what it got every BURST_MS at once: 6 s of media per burst.
const BURST_MS = 6000;
// meta.mediaSeconds is compared with the wall time since the test first saw the session
// working, which is up to a heartbeat and a poll late: this much is allowed on top of the lead.
const SEEN_LATE_SECONDS = 3;

let services: Services;
let rtmp: RtmpServer;
let proxy: Server;
let proxyPort: number;
let nc: NatsConnection;
const publishers: Publisher[] = [];

// The RTMP handshake and commands take a round trip each: they pass at once, the media in bursts.
const PASSED_AT_ONCE_BYTES = 8192;

/** A TCP relay that passes the client's bytes on at once and the server's in bursts. */
function burstProxy(upstreamPort: number): Server {
  return createServer((client: Socket) => {
    const upstream = connect(upstreamPort, '127.0.0.1');
    const held: Buffer[] = [];
    let passed = 0;
    const flush = setInterval(() => {
      if (held.length > 0 && !client.destroyed) client.write(Buffer.concat(held.splice(0)));
    }, BURST_MS);
    const close = () => {
      clearInterval(flush);
      client.destroy();
      upstream.destroy();
    };
    client.on('data', (chunk) => upstream.write(chunk));
    upstream.on('data', (chunk: Buffer) => {
      if (passed >= PASSED_AT_ONCE_BYTES) return void held.push(chunk);
      passed += chunk.length;
      client.write(chunk);
    });
    for (const socket of [client, upstream]) {
      socket.on('error', close);
      socket.on('close', close);
    }
  });
}

interface Watched {
  id: string;
  workingSeenAt?: number;
  samples: { wallSeconds: number; mediaSeconds: number; workerState: string; state: string }[];
  videoRows: { second: number; frames: number; dropped: number }[];
  end?: any;
}

async function watch(name: string, streamUri: string): Promise<Watched> {
  const created = await services.api('POST', '/v1/sessions', { body: { name, streamUri } });
  assert.is(created.status, 201, JSON.stringify(created.body));
  const watched: Watched = { id: created.body._id, samples: [], videoRows: [] };
  nc.subscribe(subjects.row(watched.id, tenantOf(services.users.alice), 'video'), {
    callback: (_error, msg) => void watched.videoRows.push(...msg.json<Watched['videoRows']>()),
  });
  return watched;
}

async function sample(watched: Watched): Promise<void> {
  const reply = await services.api('GET', `/v1/sessions/${watched.id}`);
  assert.is(reply.status, 200);
  const { meta, state } = reply.body;
  if (watched.workingSeenAt === undefined && meta.workerState === 'working') watched.workingSeenAt = Date.now();
  if (watched.workingSeenAt === undefined) return;
  const wallSeconds = (Date.now() - watched.workingSeenAt) / 1000;
  watched.samples.push({ wallSeconds, mediaSeconds: meta.mediaSeconds, workerState: meta.workerState, state });
  if (state === 'finished') watched.end ??= reply.body;
}

/** The most media a session may have had by `wallSeconds` after it was seen working. */
function mostMedia(wallSeconds: number): number {
  const { leadSeconds, driftShare } = PACING_LIMITS;
  return (wallSeconds + SEEN_LATE_SECONDS) * (1 + driftShare) + leadSeconds;
}

function assertFollowsWallClock(watched: Watched, label: string): void {
  assert.ok(watched.samples.length > 10, `${label}: seen working for ${watched.samples.length} samples`);
  for (const { wallSeconds, mediaSeconds } of watched.samples) {
    assert.ok(
      mediaSeconds <= mostMedia(wallSeconds),
      `${label}: ${mediaSeconds.toFixed(1)} s of media ${wallSeconds.toFixed(1)} s after it was seen working`,
    );
  }
}

test.before(async () => {
  const [rtmpPort, rtmpsPort] = [await freePort(), await freePort()];
  proxyPort = await freePort();
  const base = { width: 1280, height: 720, seconds: 6, fps: 15, container: 'flv' as const, video: { type: 'testsrc' as const } };
  const [silentClip, toneClip] = await Promise.all([
    makeClip({ ...base, audio: { type: 'none' } }, clipsDir),
    makeClip({ ...base, audio: { type: 'tones', tones: [{ hz: 220, seconds: 6 }] } }, clipsDir),
  ]);
  rtmp = await startRtmpServer({ dir: join(dir, 'rtmp'), rtmpPort, rtmpsPort });
  proxy = burstProxy(rtmpPort);
  await new Promise<void>((resolve) => proxy.listen(proxyPort, '127.0.0.1', resolve));
  publishers.push(publish(toneClip, rtmp.url('live')), publish(silentClip, rtmp.url('too-fast'), config.ffmpegPath, TOO_FAST));
  await Promise.all([waitForStream(rtmp.url('live')), waitForStream(rtmp.url('too-fast'))]);
  services = await startServices({
    name: 'stream-pacing',
    // ffmpeg's read timeout (at most 10 s) must outlast the gap between the proxy's bursts.
    env: { STREAM_UNREACHABLE_SECONDS: '20', HEARTBEAT_SECONDS: '1' },
  });
  nc = await connectBus('stream-pacing test', config.natsUrl, log);
});

test.after(async () => {
  await services?.stop();
  await Promise.all(publishers.map((p) => p.stop()));
  await new Promise((resolve) => proxy?.close(resolve));
  await rtmp?.stop();
  await nc?.drain();
});

test('a clip pushed too fast is held to real time and stopped; live and bursting streams go on', async () => {
  const tooFast = await watch('too fast', rtmp.url('too-fast'));
  const live = await watch('live', rtmp.url('live'));
  const bursts = await watch('bursts', `rtmp://127.0.0.1:${proxyPort}/live/live`);
  const { windowSeconds, heldShare, leadSeconds } = PACING_LIMITS;
  // Held from about the first second on, it must be stopped once held over half the window;
  // the rest is for a loaded machine, not a bound on speed.
  const deadline = Date.now() + (windowSeconds * heldShare + 90) * 1000;
  while (!tooFast.end && Date.now() < deadline) {
    await Promise.all([tooFast, live, bursts].map(sample));
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  await Promise.all([live, bursts].map(sample));
  for (const [watched, label] of [[tooFast, 'too fast'], [live, 'live'], [bursts, 'bursts']] as const) {
    const lead = Math.max(...watched.samples.map((s) => s.mediaSeconds - s.wallSeconds));
    const last = watched.samples.at(-1);
    console.log(`${label}: ${last?.mediaSeconds.toFixed(1)} s of media ${last?.wallSeconds.toFixed(1)} s after seen working (${last?.state}), largest lead seen ${lead.toFixed(1)} s`);
  }

  assert.ok(tooFast.end, `the session on the stream pushed too fast ended: ${JSON.stringify(tooFast.samples.at(-1))}`);
  assert.is(tooFast.end.meta.stopReason, 'stream_too_fast');
  assert.is(tooFast.end.meta.workerState, 'failed');
  assert.match(tooFast.end.meta.failure, /faster than real time/);
  assertFollowsWallClock(tooFast, 'too fast');

  // Its live video rows: after the first lead's worth of media, each second holds the frames of
  // about one second; without pacing a second holds tens of frames. A frame counts in the second
  // it arrived, and the lead comes as fast as ffmpeg decodes it: in a second or two, or spread
  // over five on a loaded machine, so the seconds judged begin once its frames are in (those
  // the face thread analysed or, behind, dropped: each one ffmpeg delivered).
  const rows = tooFast.videoRows.sort((a, b) => a.second - b.second);
  assert.ok(rows.length > 10, `${rows.length} video rows`);
  const first = (rows[0] as { second: number }).second;
  const last = (rows.at(-1) as { second: number }).second;
  let arrived = 0;
  const leadIn = rows.findIndex((row) => (arrived += row.frames + row.dropped) >= FPS * leadSeconds);
  const settled = rows.slice(leadIn + 1);
  assert.ok(leadIn >= 0 && settled.length > 10, `the lead's frames arrived, and ${settled.length} seconds after them`);
  const most = Math.max(...settled.map((row) => row.frames));
  assert.ok(most <= 2 * FPS, `a second held ${most} frames: ${JSON.stringify(settled.map((row) => row.frames))}`);
  const frames = rows.reduce((sum, row) => sum + row.frames, 0);
  assert.ok(frames <= FPS * (last - first + 1 + leadSeconds + 1), `${frames} frames in seconds ${first}-${last}`);

  for (const [watched, label] of [[live, 'live'], [bursts, 'bursts']] as const) {
    assertFollowsWallClock(watched, label);
    const [earlier, latest] = [watched.samples.at(-11), watched.samples.at(-1)];
    assert.ok(earlier && latest, `${label}: samples`);
    assert.is(latest.state, 'active', `${label} still active`);
    assert.is(latest.workerState, 'working', label);
    // Over the last ten samples (ten seconds or more), media kept coming at about real time.
    const gained = latest.mediaSeconds - earlier.mediaSeconds;
    const elapsed = latest.wallSeconds - earlier.wallSeconds;
    assert.ok(gained >= elapsed - BURST_MS / 1000 - 2, `${label}: ${gained.toFixed(1)} s of media in ${elapsed.toFixed(1)} s`);
  }
});

test.run();

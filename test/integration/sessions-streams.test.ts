// Sessions on real streams: local RTMP, RTMPS and RTSP servers, real ffmpeg, real hosts.
import { createLog } from '../../bus/log.ts';
import { join } from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { Ingest, type IngestExit } from '../../actors/ingest/ingest.ts';
import { DecoderSpawner } from '../../actors/ingest/decoder-spawner.ts';
import { readConfig } from '../../bus/config.ts';
import { connectBus } from '../../bus/connection.ts';
import { subjects } from '../../bus/subjects.ts';
import { waitUntil } from '../../ops/stack/process.ts';
import { makeClip, type ClipSpec } from '../support/clips.ts';
import { guardAllowingAll } from '../support/decoder-guard.ts';
import { pullersOf } from '../support/pullers.ts';
import { freePort } from '../../ops/stack/ports.ts';
import { startServices, type Services } from '../../ops/support/services.ts';
import { startRtmpServer, type RtmpServer } from '../../ops/support/streams/rtmp-server.ts';
import { publish, waitForStream, type Publisher } from '../../ops/support/streams/publish.ts';
import { startRtspServer, type RtspServer } from '../../ops/support/streams/rtsp-server.ts';

const config = readConfig();
const log = createLog(config);

const UNREACHABLE_SECONDS = 4;
const clipsDir = join(config.varDir, 'test', 'clips');
const dir = join(config.varDir, 'test', 'streams', `sessions-streams-${process.pid}`);

let services: Services;
let rtmp: RtmpServer;
let rtsp: RtspServer;
let nc: NatsConnection;
let decoders: DecoderSpawner;
let guard: Record<string, string>;
const publishers: Publisher[] = [];

const clip = (width: number, height: number, container: 'flv' | 'mkv'): Promise<string> => {
  const spec: ClipSpec = {
    width,
    height,
    seconds: 6,
    fps: 15,
    container,
    video: { type: 'testsrc' },
    audio: { type: 'tones', tones: [{ hz: 220, seconds: 6 }] },
  };
  return makeClip(spec, clipsDir);
};


async function createSession(streamUri: string) {
  const created = await services.api('POST', '/v1/sessions', { body: { name: streamUri, streamUri } });
  assert.is(created.status, 201, JSON.stringify(created.body));
  return created.body._id as string;
}

test.before(async () => {
  const [rtmpPort, rtmpsPort, rtspPort] = [await freePort(), await freePort(), await freePort()];
  const [hd, uhd, hdMkv] = await Promise.all([clip(1280, 720, 'flv'), clip(2560, 1440, 'flv'), clip(1280, 720, 'mkv')]);
  rtmp = await startRtmpServer({ dir: join(dir, 'rtmp'), rtmpPort, rtmpsPort });
  rtsp = await startRtspServer({ dir: join(dir, 'rtsp'), port: rtspPort, mounts: { hd: hdMkv } });
  publishers.push(publish(hd, rtmp.url('hd')), publish(uhd, rtmp.url('uhd')));
  await Promise.all([waitForStream(rtmp.url('hd')), waitForStream(rtmp.url('uhd')), waitForStream(rtsp.url('hd'))]);
  services = await startServices({
    name: 'streams',
    env: {
      STREAM_UNREACHABLE_SECONDS: String(UNREACHABLE_SECONDS),
      HEARTBEAT_SECONDS: '1',
      // The local RTMPS server's certificate is self-signed: it is the CA these hosts trust.
      STREAM_TLS_CA_FILE: rtmp.certificate,
    },
  });
  nc = await connectBus('sessions-streams test', config.natsUrl, log);
  guard = await guardAllowingAll(config.egressGuardLibrary);
  decoders = await DecoderSpawner.start({ runDir: join(config.varDir, 'run'), log: createLog({ ...config, logLevel: 'silent' }) });
});

test.after(async () => {
  await services?.stop();
  await Promise.all(publishers.map((p) => p.stop()));
  await rtsp?.stop();
  await rtmp?.stop();
  await nc?.drain();
  await decoders?.close();
});

for (const protocol of ['rtmp', 'rtmps', 'rtsp'] as const) {
  test(`a 720p ${protocol} stream is accepted and analysed; stop ends ffmpeg`, async () => {
    const uri = protocol === 'rtmp' ? rtmp.url('hd') : protocol === 'rtmps' ? rtmp.secureUrl('hd') : rtsp.url('hd');
    const id = await createSession(uri);
    const working = await services.waitForSession(id, (s) => s.meta.workerState === 'working' && s.meta.mediaSeconds > 1);
    assert.is(working.state, 'active');
    assert.is(working.sources[0].device, protocol);
    assert.ok(pullersOf(id).length >= 1, 'an ffmpeg pulls the stream');
    const stopped = await services.api('POST', `/v1/sessions/${id}/stop`);
    assert.is(stopped.status, 200);
    assert.is(stopped.body.state, 'finished');
    // A wait long enough to tell an ffmpeg left running from a slow machine, not a bound on speed.
    await waitUntil('ffmpeg to exit', async () => pullersOf(id).length === 0, 30_000);
  });
}

test('an rtmps server whose certificate is not trusted is refused, and accepted with its CA', async () => {
  const pull = (tls: { verify: boolean; caFile?: string }) =>
    new Promise<{ info: boolean; exit: IngestExit }>((resolve) => {
      const ingest = new Ingest({ uri: rtmp.secureUrl('hd'), session: 'rtmps', fps: 4, ffmpegPath: config.ffmpegPath, decoders, timeoutSeconds: 5, tls, env: guard });
      let info = false;
      ingest.on('info', () => {
        info = true;
        void ingest.stop();
      });
      ingest.on('exit', (exit) => resolve({ info, exit }));
      ingest.start();
    });
  const untrusted = await pull({ verify: true });
  assert.not.ok(untrusted.info, 'no media from an untrusted server');
  assert.match(untrusted.exit.reason, /certificate|verif/i);
  const trusted = await pull({ verify: true, caFile: rtmp.certificate });
  assert.ok(trusted.info, trusted.exit.reason);
});

test('a 1440p stream ends the session with resolution_exceeded and nothing analysed', async () => {
  const id = await createSession(rtmp.url('uhd'));
  const finished = await services.waitForSession(id, (s) => s.state === 'finished');
  assert.is(finished.meta.stopReason, 'resolution_exceeded');
  assert.is(finished.meta.workerState, 'failed');
  // ffprobe's decoders refuse a picture that size before describing the stream.
  assert.match(finished.meta.failure, /larger than 1920x1080, above the 1080p limit/);
  const audio = await services.api('GET', `/v1/sessions/${id}/audio/features?granularity=5`);
  assert.is(audio.status, 200);
  assert.equal(audio.body.timeline, []);
  const faces = await services.api('GET', `/v1/sessions/${id}/emotions/timeline?granularity=5`);
  assert.equal(faces.body.timeline, []);
});

test('a stream that cannot be reached ends the session with stream_unreachable', async () => {
  const deadPort = await freePort();
  const id = await createSession(`rtmp://127.0.0.1:${deadPort}/live/nothing`);
  const finished = await services.waitForSession(id, (s) => s.state === 'finished', (UNREACHABLE_SECONDS + 20) * 1000);
  assert.is(finished.meta.stopReason, 'stream_unreachable');
  assert.is(finished.meta.workerState, 'failed');
  assert.ok(finished.duration >= UNREACHABLE_SECONDS, `ended after ${finished.duration} s`);
});

test('killing ffmpeg makes the worker reconnect: reconnecting, then working again', async () => {
  const uri = rtmp.url('hd');
  const id = await createSession(uri);
  await services.waitForSession(id, (s) => s.meta.workerState === 'working');
  const states: string[] = [];
  const sub = nc.subscribe(subjects.workerState(id), {
    callback: (_err, msg) => void states.push(msg.json<{ state: string }>().state),
  });
  const [pid] = pullersOf(id).map((puller) => puller.pid);
  assert.ok(pid, 'found the session ffmpeg');
  process.kill(pid as number, 'SIGKILL');
  await waitUntil('reconnecting then working', async () => {
    const i = states.indexOf('reconnecting');
    return i >= 0 && states.indexOf('working', i) > i;
  }, 20_000);
  const session = await services.waitForSession(id, (s) => s.meta.workerState === 'working');
  assert.is(session.state, 'active');
  assert.ok(pullersOf(id).some((other) => other.pid !== pid), 'a new ffmpeg pulls the stream');
  await services.api('POST', `/v1/sessions/${id}/stop`);
  await waitUntil('the final state to be announced live', async () => states.at(-1) === 'stopped', 5000);
  sub.unsubscribe();
});

test.run();

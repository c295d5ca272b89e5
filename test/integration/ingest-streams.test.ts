// Ingest against real local stream servers: nginx-rtmp (rtmp, rtmps through TLS) and
// GStreamer's RTSP server, fed by looped pre-encoded clips. Hostile servers are in
// malicious-peers.test.ts.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { readConfig } from '../../bus/config.ts';
import { parseAllowance } from '../../actors/egress/allowance.ts';
import { EgressPolicy } from '../../actors/egress/policy.ts';
import { streamResolver } from '../../actors/egress/resolver.ts';
import { Ingest, type IngestExit, type IngestInfo } from '../../actors/ingest/ingest.ts';
import { DecoderSpawner } from '../../actors/ingest/decoder-spawner.ts';
import { createLog } from '../../bus/log.ts';
import { AUDIO_BYTES_PER_SECOND } from '../../actors/ingest/ffmpeg-args.ts';
import { PICTURE_TOO_LARGE } from '../../actors/ingest/failure-reason.ts';
import { makeClip, type ClipSpec } from '../support/clips.ts';
import { guardAllowingAll } from '../support/decoder-guard.ts';
import { freePort } from '../../ops/stack/ports.ts';
import { startRtmpServer, type RtmpServer } from '../../ops/support/streams/rtmp-server.ts';
import { startRtspServer, type RtspServer } from '../../ops/support/streams/rtsp-server.ts';
import { publish, waitForStream } from '../../ops/support/streams/publish.ts';

const config = readConfig();

const FPS = 4;
/** An ingest that has not ended by itself after this has hung (not a bound on its speed). */
const HANG_MS = 60_000;
const TONE_HZ = 440;
const streamsDir = join(config.varDir, 'test', 'streams', 'ingest');
const clipsDir = join(config.varDir, 'test', 'clips');

const toneClip: ClipSpec = {
  width: 1280, height: 720, seconds: 10, fps: 25,
  video: { type: 'testsrc' },
  audio: { type: 'tones', tones: [{ hz: TONE_HZ, seconds: 10 }] },
};
const bigClip: ClipSpec = {
  width: 2560, height: 1440, seconds: 4, fps: 10,
  video: { type: 'color', color: 'teal' },
  audio: { type: 'silence' },
};
const muteClip: ClipSpec = {
  width: 480, height: 640, seconds: 4, fps: 25,
  video: { type: 'testsrc' },
  audio: { type: 'none' },
};

const cleanups: (() => Promise<void>)[] = [];
let rtmp: RtmpServer;
let rtsp: RtspServer;
let decoders: DecoderSpawner;
let guard: Record<string, string>;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Resolves after HANG_MS without holding the process open once the tests are done. */
const hung = () => new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), HANG_MS).unref());

test.before(async () => {
  const [tone, toneMp4, big, mute, muteMkv] = await Promise.all([
    makeClip(toneClip, clipsDir),
    makeClip({ ...toneClip, container: 'mp4' }, clipsDir),
    makeClip(bigClip, clipsDir),
    makeClip(muteClip, clipsDir),
    makeClip({ ...muteClip, container: 'mkv' }, clipsDir),
  ]);
  guard = await guardAllowingAll(config.egressGuardLibrary);
  decoders = await DecoderSpawner.start({ runDir: join(config.varDir, 'run'), log: createLog({ ...config, logLevel: 'silent' }) });
  cleanups.push(() => decoders.close());
  const [rtmpPort, rtmpsPort, rtspPort] = [await freePort(), await freePort(), await freePort()];
  rtmp = await startRtmpServer({ dir: streamsDir, rtmpPort, rtmpsPort });
  cleanups.push(() => rtmp.stop());
  rtsp = await startRtspServer({ dir: streamsDir, port: rtspPort, mounts: { tone: toneMp4, mute: muteMkv } });
  cleanups.push(() => rtsp.stop());
  for (const [name, clip] of [['tone', tone], ['big', big], ['mute', mute]] as const) {
    const publisher = publish(clip, rtmp.url(name));
    cleanups.push(() => publisher.stop());
  }
  await Promise.all([
    waitForStream(rtmp.url('tone')),
    waitForStream(rtmp.url('big')),
    waitForStream(rtmp.url('mute')),
    waitForStream(rtsp.url('tone')),
    waitForStream(rtsp.url('mute')),
  ]);
});

test.after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch((error) => console.error(error));
});

interface Observed {
  info: IngestInfo | undefined;
  mediaBeforeInfo: number;
  frameSizes: Set<number>;
  framesInWindow: number;
  audioBytesInWindow: number;
  zeroCrossingsInWindow: number;
  distinctFrameBytes: number;
  exit: IngestExit | undefined;
}

// Pulls `uri`; from the first frame on, skips `warmupSeconds` (connection bursts), then counts what
// arrives during `windowSeconds`.
async function observe(uri: string, warmupSeconds: number, windowSeconds: number): Promise<Observed> {
  const ingest = new Ingest({ uri, session: 'observed', fps: FPS, ffmpegPath: config.ffmpegPath, decoders, timeoutSeconds: 5, env: guard });
  const seen: Observed = {
    info: undefined, mediaBeforeInfo: 0, frameSizes: new Set(), framesInWindow: 0,
    audioBytesInWindow: 0, zeroCrossingsInWindow: 0, distinctFrameBytes: 0, exit: undefined,
  };
  let windowStart = Infinity;
  let windowEnd = Infinity;
  let previousSample = 0;
  const inWindow = (at: number) => at >= windowStart && at < windowEnd;
  const startWindow = (at: number) => {
    if (windowStart !== Infinity) return;
    windowStart = at + warmupSeconds * 1000;
    windowEnd = windowStart + windowSeconds * 1000;
  };
  ingest.on('info', (info) => (seen.info = info));
  ingest.on('audio', (chunk, receivedAt) => {
    if (!seen.info) seen.mediaBeforeInfo++;
    if (!inWindow(receivedAt)) return;
    seen.audioBytesInWindow += chunk.length;
    for (let i = 0; i + 1 < chunk.length; i += 2) {
      const sample = chunk.readInt16LE(i);
      if ((sample >= 0) !== (previousSample >= 0)) seen.zeroCrossingsInWindow++;
      previousSample = sample;
    }
  });
  ingest.on('frame', (frame) => {
    if (!seen.info) seen.mediaBeforeInfo++;
    startWindow(frame.receivedAt);
    seen.frameSizes.add(frame.rgb.length);
    seen.distinctFrameBytes = Math.max(seen.distinctFrameBytes, new Set(frame.rgb.subarray(0, 3000)).size);
    if (inWindow(frame.receivedAt)) seen.framesInWindow++;
  });
  ingest.on('exit', (exit) => (seen.exit = exit));
  ingest.start();
  try {
    const deadline = Date.now() + 20000;
    while (Date.now() < deadline && !seen.exit && !(Date.now() >= windowEnd)) await sleep(100);
  } finally {
    await ingest.stop();
  }
  return seen;
}

// Counted after the first frames: a loaded machine may start a stream behind and deliver the
// backlog at once (a CI run saw 20 RTSP frames in 3 s, one second after the first), which
// says nothing about the rate of a stream in its stride.
const WARMUP_SECONDS = 3;
const WINDOW_SECONDS = 4;
const observeLive = (uri: string) => observe(uri, WARMUP_SECONDS, WINDOW_SECONDS);

function assertLiveToneStream(seen: Observed, label: string): void {
  assert.ok(seen.info, `${label}: info`);
  assert.equal(seen.mediaBeforeInfo, 0, `${label}: nothing delivered before info`);
  assert.equal(
    seen.info,
    { width: 1280, height: 720, hasAudio: true, hasVideo: true, outputWidth: 640, outputHeight: 360 },
    label,
  );
  assert.equal([...seen.frameSizes], [640 * 360 * 3], `${label}: every frame is 640x360 RGB`);
  assert.ok(seen.distinctFrameBytes > 10, `${label}: frames carry a picture`);
  // Over the stream's own time, its audio's: a loaded machine's decoder falls behind the clock
  // (runs on a busy two-core machine saw 10 and 4 frames in the 4 s window), video and audio
  // alike, one ffmpeg reading both; what is decimated to the analysis rate is the stream's time.
  // The picture's decoder can fall behind the sound's and catch up within the window (a CI run
  // saw 25 RTSP frames in 3.97 s of audio), so the rate is judged between half and twice the
  // analysis rate: a stream not decimated sends its own 25 a second.
  const audioSeconds = seen.audioBytesInWindow / AUDIO_BYTES_PER_SECOND;
  assert.ok(
    seen.framesInWindow >= (FPS / 2) * audioSeconds && seen.framesInWindow <= FPS * 2 * audioSeconds,
    `${label}: ${seen.framesInWindow} frames in ${audioSeconds} s of audio at ${FPS} fps`,
  );
  // Enough to judge the rates by. Not held to the clock: a busy machine's decoder falls behind and
  // then catches up (CI runs on two slow cores saw 4.76 s and 1.51 s of audio in the 4 s window).
  assert.ok(audioSeconds >= 1, `${label}: ${audioSeconds} s of audio in ${WINDOW_SECONDS} s`);
  // Over the audio's own time too (a run on a throttled machine heard 470 Hz by the clock, its
  // audio 7 % over the window's): the tone at its pitch says the samples are 16 kHz.
  const hz = seen.zeroCrossingsInWindow / 2 / audioSeconds;
  assert.ok(Math.abs(hz - TONE_HZ) < TONE_HZ * 0.05, `${label}: tone heard at ${hz} Hz`);
  assert.is(seen.exit?.reason, 'stopped', label);
}

test('rtmp, rtmps through TLS, rtsp over TCP, side by side: info, 640x360 frames at the analysis rate, 16 kHz audio', async () => {
  const uris = { rtmp: rtmp.url('tone'), rtmps: rtmp.secureUrl('tone'), rtsp: rtsp.url('tone') };
  const seen = await Promise.all(Object.values(uris).map(observeLive));
  for (const [index, label] of Object.keys(uris).entries()) assertLiveToneStream(seen[index]!, label);
});

test('a 2560x1440 stream is refused by the probe: no description, no ffmpeg, no frame', async () => {
  const seen = await observe(rtmp.url('big'), 0, 1);
  assert.is(seen.info, undefined);
  assert.equal([...seen.frameSizes], []);
  assert.is(seen.exit?.reason, PICTURE_TOO_LARGE);
});

test('a listener that stops the ingest on info keeps ffmpeg from running at all', async () => {
  const ingest = new Ingest({ uri: rtmp.url('tone'), session: 'stopped-on-info', fps: FPS, ffmpegPath: config.ffmpegPath, decoders, timeoutSeconds: 5, env: guard });
  let pidAtInfo: number | undefined = -1;
  ingest.on('info', () => {
    pidAtInfo = ingest.pid;
    void ingest.stop();
  });
  const exit = new Promise<IngestExit>((resolve) => ingest.once('exit', resolve));
  ingest.start();
  const result = await exit;
  assert.is(pidAtInfo, undefined, 'no ffmpeg before info');
  assert.is(ingest.pid, undefined, 'no ffmpeg after it');
  assert.is(result.reason, 'stopped');
});

test('rtmp and rtsp streams without audio still deliver frames, and say they have no audio', async () => {
  const uris = { rtmp: rtmp.url('mute'), rtsp: rtsp.url('mute') };
  const seen = await Promise.all(Object.values(uris).map((uri) => observe(uri, 1, 2)));
  for (const [index, label] of Object.keys(uris).entries()) {
    const { info, frameSizes, framesInWindow, exit } = seen[index]!;
    assert.equal(info, { width: 480, height: 640, hasAudio: false, hasVideo: true, outputWidth: 480, outputHeight: 640 }, label);
    assert.equal([...frameSizes], [480 * 640 * 3], label);
    assert.ok(framesInWindow >= (FPS - 1) * 2, `${label}: ${framesInWindow} frames in 2 s`);
    assert.ok((exit?.mediaSeconds ?? 0) > 2, `${label}: media seconds ${exit?.mediaSeconds}`);
  }
});

for (const scheme of ['rtmp', 'rtsp'] as const) {
  test(`${scheme} to a closed port exits by itself, with a reason`, async () => {
    const port = await freePort();
    const uri = scheme === 'rtmp' ? `rtmp://127.0.0.1:${port}/live/none` : `rtsp://127.0.0.1:${port}/none`;
    const ingest = new Ingest({ uri, session: 'closed-port', fps: FPS, ffmpegPath: config.ffmpegPath, decoders, timeoutSeconds: 3, env: guard });
    const exit = new Promise<IngestExit>((resolve) => ingest.once('exit', resolve));
    ingest.start();
    try {
      // Refused, not timed out: the reason says which.
      const result = await Promise.race([exit, hung()]);
      assert.ok(result, 'exited');
      assert.is(result.reason, 'connection refused');
      assert.is(result.stopped, false);
      assert.is(result.mediaSeconds, 0);
    } finally {
      await ingest.stop();
    }
  });
}

test('a stream that stops sending ends the ingest by itself', async () => {
  const name = 'vanishing';
  const publisher = publish(await makeClip(toneClip, clipsDir), rtmp.url(name));
  const ingest = new Ingest({ uri: rtmp.url(name), session: name, fps: FPS, ffmpegPath: config.ffmpegPath, decoders, timeoutSeconds: 3, env: guard });
  try {
    await waitForStream(rtmp.url(name));
    const firstFrame = new Promise((resolve) => ingest.once('frame', resolve));
    const exit = new Promise<IngestExit>((resolve) => ingest.once('exit', resolve));
    ingest.start();
    await firstFrame;
    await publisher.stop();
    const result = await Promise.race([exit, hung()]);
    assert.ok(result, 'exited');
    assert.ok(['stream ended', 'timed out', 'connection failed'].includes(result.reason) || /^no media received for \d+ s$/.test(result.reason), result.reason);
    assert.ok(result.mediaSeconds > 0);
  } finally {
    await ingest.stop();
    await publisher.stop();
  }
});

test('credentials in the URI never reach the reason', async () => {
  const port = await freePort();
  for (const uri of [`rtmp://admin:s3cret@127.0.0.1:${port}/live/x`, `rtsp://admin:s3cret@127.0.0.1:${port}/cam`, 'rtmp://admin:s3cret@host.invalid/live/x']) {
    const ingest = new Ingest({ uri, session: 'credentials', fps: FPS, ffmpegPath: config.ffmpegPath, decoders, timeoutSeconds: 3, env: guard });
    const exit = new Promise<IngestExit>((resolve) => ingest.once('exit', resolve));
    ingest.start();
    const { reason } = await exit;
    assert.ok(['connection refused', 'host name not resolved'].includes(reason), reason);
    assert.not.match(reason, /admin|s3cret|127\.0\.0\.1|invalid/);
  }
});

test('ffprobe runs with the environment given, the egress guard included', async () => {
  const env = await new EgressPolicy(parseAllowance('false'), config.egressGuardLibrary, streamResolver({ servers: config.streamDnsServers, timeoutMs: config.streamDnsTimeoutMs })).guardEnvironment();
  const ingest = new Ingest({ uri: rtmp.url('tone'), session: 'refused', fps: FPS, ffmpegPath: config.ffmpegPath, decoders, timeoutSeconds: 3, env });
  let info = false;
  ingest.on('info', () => (info = true));
  const exit = new Promise<IngestExit>((resolve) => ingest.once('exit', resolve));
  ingest.start();
  const { reason } = await exit;
  assert.not.ok(info, 'the guard kept ffprobe from connecting');
  assert.is(reason, 'connection not allowed by the egress policy');
});

/** The environment a running process was started with, from /proc. */
function environmentOf(pid: number): Map<string, string> {
  const entries = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean);
  return new Map(entries.map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]));
}

test('ffprobe and ffmpeg hold no credential of the service, nor the stream key: PATH, the locale and the guard only', async () => {
  const secrets = { NATS_URL: 'nats://svc:nats-secret@127.0.0.1:4222', CLICKHOUSE_PASSWORD: 'clickhouse-secret', AUTH_TOKENS: 'token-secret' };
  const saved = Object.fromEntries(Object.keys(secrets).map((name) => [name, process.env[name]]));
  Object.assign(process.env, secrets);
  const env = await new EgressPolicy(parseAllowance('true'), config.egressGuardLibrary, streamResolver({ servers: config.streamDnsServers, timeoutMs: config.streamDnsTimeoutMs })).guardEnvironment();
  const allowed = new Set(['PATH', 'LANG', 'LC_ALL', 'TZ', ...Object.keys(env)]);
  // Read once the decoder is past main(), where the guard has wiped the stream URI's variable.
  const assertClean = (pid: number, program: string, key: string) => {
    const seen = environmentOf(pid);
    for (const name of seen.keys()) assert.ok(allowed.has(name), `${program} has ${name}`);
    for (const value of seen.values()) assert.not.match(value, /secret/, program);
    assert.is(seen.get('LD_PRELOAD'), env.LD_PRELOAD, `${program} keeps the egress guard`);
    assert.not.ok(readFileSync(`/proc/${pid}/environ`, 'utf8').includes(key), `${program}'s environment memory holds no stream key`);
    assert.not.ok(readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(key), `${program}'s command line holds no stream key`);
  };
  // A server that accepts and never answers keeps ffprobe waiting in its handshake.
  const sockets: Socket[] = [];
  const silent = createServer((socket) => sockets.push(socket));
  const port = await freePort();
  await new Promise<void>((resolve) => silent.listen(port, '127.0.0.1', resolve));
  const probing = new Ingest({ uri: `rtmp://127.0.0.1:${port}/live/silent-secret`, session: 'probing', fps: FPS, ffmpegPath: config.ffmpegPath, decoders, timeoutSeconds: 5, env });
  const pulling = new Ingest({ uri: rtmp.url('tone'), session: 'pulling', fps: FPS, ffmpegPath: config.ffmpegPath, decoders, timeoutSeconds: 5, env });
  try {
    probing.start();
    let ffprobe: number | undefined;
    // Connected to the server: ffprobe's main() has run.
    for (let tries = 0; !(ffprobe && sockets.length > 0) && tries < 50; tries++) {
      await sleep(100);
      ffprobe = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' }).split('\n')
        .filter((line) => line.includes('ffprobe') && line.includes(' -i emo-stream:probing:'))
        .map((line) => Number(line.trim().split(/\s+/)[0]))[0];
    }
    assert.ok(ffprobe, 'ffprobe is running');
    assert.ok(sockets.length > 0, 'ffprobe connected');
    assertClean(ffprobe, 'ffprobe', 'silent-secret');

    const firstFrame = new Promise((resolve) => pulling.once('frame', resolve));
    pulling.start();
    await firstFrame;
    assert.ok(pulling.pid, 'ffmpeg is running');
    assertClean(pulling.pid, 'ffmpeg', '/live/tone');
  } finally {
    await Promise.all([probing.stop(), pulling.stop()]);
    for (const socket of sockets) socket.destroy();
    silent.close();
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
});

test('stop() ends ffmpeg and leaves no process', async () => {
  const ingest = new Ingest({ uri: rtmp.url('tone'), session: 'stopped', fps: FPS, ffmpegPath: config.ffmpegPath, decoders, timeoutSeconds: 5, env: guard });
  const firstFrame = new Promise((resolve) => ingest.once('frame', resolve));
  ingest.start();
  try {
    await firstFrame;
    const pid = ingest.pid;
    assert.ok(pid, 'ffmpeg started');
    await ingest.stop();
    assert.throws(() => process.kill(pid, 0), /ESRCH/);
  } finally {
    await ingest.stop();
  }
});

test.run();

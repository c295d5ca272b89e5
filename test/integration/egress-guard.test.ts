// The egress guard holds ffmpeg to the stream address policy on every connection it makes,
// not only on the URI's host at creation: an RTSP redirect to ClickHouse's HTTP port or to any
// loopback port outside ALLOW_PRIVATE_STREAM_HOSTS connects nowhere, whatever the name
// resolved to first. Real ffmpeg, a malicious RTSP server, the real service.
import { spawn } from 'node:child_process';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { parseAllowance } from '../../actors/egress/allowance.ts';
import { EgressPolicy } from '../../actors/egress/policy.ts';
import { streamResolver } from '../../actors/egress/resolver.ts';
import { readConfig } from '../../bus/config.ts';
import { freePort } from '../../ops/stack/ports.ts';
import { startServices, type Services } from '../../ops/support/services.ts';
import { makeClip } from '../support/clips.ts';
import { publish, waitForStream, type Publisher } from '../../ops/support/streams/publish.ts';
import { startRtmpServer, type RtmpServer } from '../../ops/support/streams/rtmp-server.ts';
import { httpRequest } from '../../ops/stack/http-client.ts';

const config = readConfig();

const UNREACHABLE_SECONDS = 3;
const dir = join(config.varDir, 'test', 'streams', `egress-guard-${process.pid}`);
const probeTable = `egress_probe_${process.pid}`;

interface Listener {
  port: number;
  connections: number;
  close(): Promise<void>;
}

/** A TCP port that only counts who connects to it. */
async function trap(): Promise<Listener> {
  return listen((socket) => socket.destroy());
}

async function listen(onConnection: (socket: Socket) => void): Promise<Listener> {
  const sockets = new Set<Socket>();
  const port = await freePort();
  const listener: Listener = { port, connections: 0, close: () => new Promise((resolve) => server.close(() => resolve())) };
  const server: Server = createServer((socket) => {
    listener.connections++;
    sockets.add(socket);
    socket.on('error', () => {});
    socket.once('close', () => sockets.delete(socket));
    onConnection(socket);
  });
  const close = listener.close;
  listener.close = () => {
    for (const socket of sockets) socket.destroy();
    return close();
  };
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return listener;
}

/** An RTSP server that answers every DESCRIBE with a redirect to `location(path)`. */
async function redirector(location: (path: string) => string): Promise<Listener & { describes: number }> {
  let describes = 0;
  const listener = await listen((socket) => {
    let pending = '';
    socket.on('data', (data) => {
      pending += data.toString('latin1');
      for (let end = pending.indexOf('\r\n\r\n'); end >= 0; end = pending.indexOf('\r\n\r\n')) {
        const request = pending.slice(0, end);
        pending = pending.slice(end + 4);
        const [method = '', uri = ''] = request.split(' ');
        const cseq = /^CSeq:\s*(\d+)/im.exec(request)?.[1] ?? '0';
        if (method === 'DESCRIBE') {
          describes++;
          socket.write(`RTSP/1.0 302 Found\r\nCSeq: ${cseq}\r\nLocation: ${location(new URL(uri).pathname)}\r\nContent-Length: 0\r\n\r\n`);
        } else {
          socket.write(`RTSP/1.0 200 OK\r\nCSeq: ${cseq}\r\nPublic: OPTIONS, DESCRIBE, SETUP, PLAY, TEARDOWN\r\n\r\n`);
        }
      }
    });
  });
  return Object.defineProperty(listener, 'describes', { get: () => describes }) as Listener & { describes: number };
}

/** Runs ffmpeg on `uri` with the guard of `setting` until it gives up. */
async function pullOnce(uri: string, setting: string): Promise<void> {
  const env = await new EgressPolicy(parseAllowance(setting), config.egressGuardLibrary, streamResolver({ servers: config.streamDnsServers, timeoutMs: config.streamDnsTimeoutMs })).guardEnvironment();
  const timeout = uri.startsWith('rtsp') ? ['-rtsp_transport', 'tcp', '-timeout', '2000000'] : ['-rw_timeout', '2000000'];
  const ffmpeg = spawn(config.ffmpegPath, ['-hide_banner', '-nostdin', '-loglevel', 'error', ...timeout, '-i', uri, '-t', '1', '-f', 'null', '-'], {
    env: { ...process.env, ...env },
    stdio: 'ignore',
  });
  await new Promise((resolve) => ffmpeg.once('close', resolve));
}

const isRunning = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const clickhouse = (query: string) =>
  httpRequest(`${process.env.CLICKHOUSE_URL}/?query=${encodeURIComponent(query)}`).then((reply) => reply.text.trim());

let services: Services;
let rtmp: RtmpServer;
let publisher: Publisher;
let forbidden: Listener;
let malicious: Listener & { describes: number };
let rtmpPort: number;

test.before(async () => {
  forbidden = await trap();
  const clickhousePort = new URL(process.env.CLICKHOUSE_URL!).port;
  const createTable = encodeURIComponent(`CREATE TABLE default.${probeTable} (x UInt8) ENGINE = Memory`);
  malicious = await redirector((path) =>
    path === '/clickhouse' ? `rtsp://127.0.0.1:${clickhousePort}/?query=${createTable}` : `rtsp://127.0.0.1:${forbidden.port}/inside`,
  );
  rtmpPort = await freePort();
  rtmp = await startRtmpServer({ dir: join(dir, 'rtmp'), rtmpPort, rtmpsPort: await freePort() });
  const clip = await makeClip(
    { width: 640, height: 360, seconds: 6, fps: 15, container: 'flv', video: { type: 'testsrc' }, audio: { type: 'tones', tones: [{ hz: 220, seconds: 6 }] } },
    join(config.varDir, 'test', 'clips'),
  );
  publisher = publish(clip, rtmp.url('cam'));
  await waitForStream(rtmp.url('cam'));
  services = await startServices({
    name: 'egress-guard',
    env: {
      ALLOW_PRIVATE_STREAM_HOSTS: `127.0.0.1:${malicious.port},127.0.0.1:${rtmpPort}`,
      STREAM_UNREACHABLE_SECONDS: String(UNREACHABLE_SECONDS),
    },
  });
});

test.after(async () => {
  await services?.stop();
  await publisher?.stop();
  await rtmp?.stop();
  await malicious?.close();
  await forbidden?.close();
  await clickhouse(`DROP TABLE IF EXISTS default.${probeTable}`).catch(() => {});
});

test('ffmpeg under the guard connects to no refused address, however it is written or reached', async () => {
  const before = forbidden.connections;
  for (const uri of [
    `rtmp://127.0.0.1:${forbidden.port}/live/x`,
    `rtmps://127.0.0.1:${forbidden.port}/live/x`,
    `rtsp://127.0.0.1:${forbidden.port}/cam`,
    `rtmp://localhost:${forbidden.port}/live/x`,
    `rtmp://[::ffff:127.0.0.1]:${forbidden.port}/live/x`,
    `rtmp://2130706433:${forbidden.port}/live/x`,
  ]) {
    await pullOnce(uri, 'false');
  }
  await pullOnce(`rtsp://127.0.0.1:${malicious.port}/elsewhere`, `127.0.0.1:${malicious.port}`);
  assert.is(forbidden.connections, before, 'nothing connected to the refused port');
  assert.ok(malicious.describes >= 1, 'the allowed server was reached and redirected');

  // The same pulls do connect where the policy allows it: the checks above can fail.
  await pullOnce(`rtmp://127.0.0.1:${forbidden.port}/live/x`, `127.0.0.1:${forbidden.port}`);
  await pullOnce(`rtsp://127.0.0.1:${malicious.port}/elsewhere`, 'true');
  assert.is(forbidden.connections, before + 2);
});

test('a session whose RTSP server redirects to ClickHouse or a loopback port outside the list fails cleanly, reaching neither', async () => {
  const before = { forbidden: forbidden.connections, describes: malicious.describes };
  const ids: string[] = [];
  for (const path of ['clickhouse', 'cam']) {
    const created = await services.api('POST', '/v1/sessions', { body: { name: path, streamUri: `rtsp://127.0.0.1:${malicious.port}/${path}` } });
    assert.is(created.status, 201, JSON.stringify(created.body));
    ids.push(created.body._id);
  }
  for (const id of ids) {
    const finished = await services.waitForSession(id, (s) => s.state === 'finished', (UNREACHABLE_SECONDS + 30) * 1000);
    assert.is(finished.meta.stopReason, 'stream_unreachable');
    assert.is(finished.meta.failure, 'connection not allowed by the egress policy', 'our words, not the redirect target');
  }
  assert.ok(malicious.describes >= before.describes + 2, 'ffmpeg reached the allowed server and was redirected');
  assert.is(forbidden.connections, before.forbidden, 'nothing connected to the loopback port outside the list');
  assert.is(await clickhouse(`EXISTS TABLE default.${probeTable}`), '0', 'ClickHouse ran nothing');
  for (const host of services.hosts) assert.ok(isRunning(host.pid), 'the actor host is still running');
});

test('a stream on an allowed loopback entry is pulled and analysed as usual', async () => {
  const created = await services.api('POST', '/v1/sessions', { body: { name: 'allowed', streamUri: rtmp.url('cam') } });
  assert.is(created.status, 201, JSON.stringify(created.body));
  await services.waitForSession(created.body._id, (s) => s.meta.workerState === 'working' && s.meta.mediaSeconds > 1, 30_000);
  const stopped = await services.api('POST', `/v1/sessions/${created.body._id}/stop`);
  assert.is(stopped.status, 200, JSON.stringify(stopped.body));
});

test('creation: a loopback address, name or port outside the list is 400 naming body.streamUri', async () => {
  for (const streamUri of [
    `rtmp://127.0.0.1:${forbidden.port}/live/x`,
    `rtmp://localhost:${forbidden.port}/live/x`,
    `rtsp://127.0.0.2:${malicious.port}/cam`,
    `rtsp://[::1]:${malicious.port}/cam`,
    'rtmp://10.0.0.1/live/x',
  ]) {
    const reply = await services.api('POST', '/v1/sessions', { body: { name: 'x', streamUri } });
    assert.is(reply.status, 400, `${streamUri}: ${JSON.stringify(reply.body)}`);
    assert.is(reply.body.details[0].field, 'body.streamUri');
  }
});

test.run();

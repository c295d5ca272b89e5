// An actor host starts its decoders through its decoder spawner (actors/ingest/spawner-process.ts),
// never by forking itself: a session's ffmpeg is the spawner's child, and its CPU is counted as
// the session's. A spawner killed is started again and the session pulls on through the new
// one, while the orphaned ffmpeg fails at its next write. An actor host killed with SIGKILL
// leaves no ffmpeg or ffprobe running. Real hosts, nginx-rtmp, real ffmpeg, and a server that
// trickles its handshake to keep ffprobe waiting.
import { readFileSync, readdirSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { test } from '../support/uvu.ts';
import * as assert from 'uvu/assert';
import { readConfig } from '../../bus/config.ts';
import { waitUntil } from '../../ops/stack/process.ts';
import { freePort } from '../../ops/stack/ports.ts';
import { parsePrometheusText } from '../../ops/support/prometheus-text.ts';
import { startServices, type Services } from '../../ops/support/services.ts';
import { publish, waitForStream, type Publisher } from '../../ops/support/streams/publish.ts';
import type { RtmpServer } from '../../ops/support/streams/rtmp-server.ts';
import { makeClip } from '../support/clips.ts';
import { startStreamServer } from '../support/analysis.ts';
import { pullersOf } from '../support/pullers.ts';

const config = readConfig();
/** A wait long enough to tell a process left running from a slow machine, not a bound on speed. */
const GONE_MS = 30_000;

let services: Services;
let rtmp: RtmpServer;
let publisher: Publisher;
let trickler: Server;
let tricklerPort: number;
/** The session on the live stream. */
let live: string;
const trickles: Socket[] = [];

function stat(pid: number): { state: string; ppid: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0] as string, ppid: Number(fields[1]) };
  } catch {
    return undefined;
  }
}

/** Alive and not a zombie waiting to be reaped. */
function running(pid: number): boolean {
  const now = stat(pid);
  return now !== undefined && now.state !== 'Z';
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    return '';
  }
}

/** The ffprobe processes probing `uri`. */
function probersOf(uri: string): number[] {
  return readdirSync('/proc')
    .map(Number)
    .filter((pid) => Number.isInteger(pid) && running(pid))
    .filter((pid) => {
      const line = commandLine(pid);
      return line.includes('ffprobe') && line.includes(` -i ${uri} `);
    });
}

async function decoderCpuSeconds(metricsUrl: string): Promise<number> {
  const samples = parsePrometheusText(await (await fetch(`${metricsUrl}/metrics`)).text());
  return samples
    .filter((sample) => sample.name === 'emo_session_cpu_seconds_total' && sample.labels.part === 'decoder')
    .reduce((sum, sample) => sum + sample.value, 0);
}

async function createSession(name: string, streamUri: string): Promise<string> {
  const created = await services.api('POST', '/v1/sessions', { body: { name, streamUri } });
  assert.is(created.status, 201, JSON.stringify(created.body));
  return created.body._id;
}

/** The one ffmpeg pulling `uri`, once there is one that runs. */
async function pullerOf(uri: string): Promise<number> {
  let pid: number | undefined;
  await waitUntil(`an ffmpeg pulling ${uri}`, async () => {
    pid = pullersOf(uri).find((puller) => running(puller.pid))?.pid;
    return pid !== undefined;
  }, 60_000);
  return pid as number;
}

test.before(async () => {
  services = await startServices({ name: 'decoder-spawner', env: { STREAM_UNREACHABLE_SECONDS: '600' } });
  rtmp = await startStreamServer('decoder-spawner');
  const clip = await makeClip(
    { width: 320, height: 240, seconds: 10, fps: 10, container: 'flv', video: { type: 'testsrc' }, audio: { type: 'tones', tones: [{ hz: 300, seconds: 10 }] } },
    join(config.varDir, 'test', 'clips'),
  );
  publisher = publish(clip, rtmp.url('spawned'));
  await waitForStream(rtmp.url('spawned'));
  // An RTMP server that sends its handshake a byte at a time: each byte comes within ffprobe's
  // read timeout, so ffprobe waits until someone kills it.
  trickler = createServer((socket) => {
    trickles.push(socket);
    socket.on('error', () => {});
    const timer = setInterval(() => socket.write(Buffer.of(3)), 500);
    socket.on('close', () => clearInterval(timer));
  });
  tricklerPort = await freePort();
  await new Promise<void>((resolve) => trickler.listen(tricklerPort, '127.0.0.1', resolve));
});

test.after(async () => {
  await services?.stop();
  await publisher?.stop();
  await rtmp?.stop();
  for (const socket of trickles) socket.destroy();
  trickler?.close();
});

test("a session's ffmpeg is the spawner's child, writes to the host's sockets, and its CPU is the session's", async () => {
  const host = services.hosts[0]!;
  const uri = rtmp.url('spawned');
  live = await createSession('spawned', uri);
  await services.waitForSession(live, (session) => session.meta.workerState === 'working', 60_000);
  const ffmpeg = await pullerOf(uri);
  const spawner = stat(ffmpeg)!.ppid;
  assert.is.not(spawner, host.pid, 'not a child of the actor host');
  assert.is(stat(spawner)?.ppid, host.pid, "the spawner is the host's child");
  assert.match(commandLine(spawner), /spawner-process\.ts/);
  // The media goes to unix sockets in the host's own directory under the run dir.
  assert.match(commandLine(ffmpeg), new RegExp(` unix:${join(config.varDir, 'run')}/decoders-${host.pid}-\\w+/\\d+-audio\\.sock `));
  // The pid the spawner relayed is the one whose /proc the host reads for the session's cost.
  await waitUntil('decoder CPU counted for the session', async () => (await decoderCpuSeconds(services.metrics.hosts[0]!)) > 0, 60_000);
});

test('a spawner killed is started again: the session pulls on through the new one, the orphaned ffmpeg exits', async () => {
  const host = services.hosts[0]!;
  const uri = rtmp.url('spawned');
  const orphan = await pullerOf(uri);
  const killed = stat(orphan)!.ppid;
  const before = (await services.waitForSession(live, () => true)).meta.mediaSeconds as number;
  process.kill(killed, 'SIGKILL');
  let ffmpeg: number | undefined;
  await waitUntil('a new ffmpeg from a new spawner', async () => {
    ffmpeg = pullersOf(uri).find((puller) => puller.pid !== orphan && running(puller.pid))?.pid;
    return ffmpeg !== undefined;
  }, 60_000);
  const spawner = stat(ffmpeg!)!.ppid;
  assert.is.not(spawner, killed);
  assert.is(stat(spawner)?.ppid, host.pid);
  // Its sockets were dropped when its spawner was lost: it fails at its next write.
  await waitUntil('the orphaned ffmpeg to exit', async () => !running(orphan), GONE_MS);
  // The pull was lost as a dropped stream is: the worker reconnected, and media flows again.
  await services.waitForSession(live, (session) => session.meta.workerState === 'working' && session.meta.mediaSeconds > before + 2, 60_000);
});

test('an actor host killed with SIGKILL leaves no ffmpeg or ffprobe of its own running', async () => {
  const host = services.hosts[0]!;
  const uri = rtmp.url('spawned');
  const trickling = `rtmp://127.0.0.1:${tricklerPort}/live/held`;
  await createSession('held', trickling);
  const ffmpeg = await pullerOf(uri);
  let ffprobe: number | undefined;
  await waitUntil('an ffprobe held by the trickling server', async () => {
    ffprobe = probersOf(trickling)[0];
    return ffprobe !== undefined;
  }, 60_000);
  const spawner = stat(ffmpeg)!.ppid;
  assert.is(stat(ffprobe!)?.ppid, spawner, 'ffprobe is the spawner\'s child too');
  process.kill(host.pid, 'SIGKILL');
  await waitUntil('the host\'s decoders and spawner to be gone', async () => ![ffmpeg, ffprobe!, spawner].some(running), GONE_MS);
  assert.equal(pullersOf(uri).filter((puller) => running(puller.pid)), []);
  assert.equal(probersOf(trickling), []);
  // A host for the sessions left active, so that stopping them at the end is answered.
  await services.startHost();
});

test.run();

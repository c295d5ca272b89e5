// An actor host starts its decoders through its decoder spawner (actors/ingest/spawner-process.ts),
// never by forking itself: a session's ffmpeg is the spawner's child, and its CPU is counted as
// the session's. A spawner killed is started again and the session pulls on through the new
// one, while the orphaned ffmpeg fails at its next write. An actor host killed with SIGKILL
// leaves no ffmpeg or ffprobe running. No decoder's command line holds the stream key, nor its
// environment once it runs. Real hosts, nginx-rtmp, real ffmpeg, and a server that trickles its
// handshake to keep ffprobe waiting.
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { test } from '../../ops/support/uvu.ts';
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
import { placeholderOf, pullersOf } from '../support/pullers.ts';
import { httpRequest } from '../../ops/stack/http-client.ts';

const config = readConfig();
/** A wait long enough to tell a process left running from a slow machine, not a bound on speed. */
const GONE_MS = 30_000;

let services: Services;
let rtmp: RtmpServer;
let publisher: Publisher;
let clip: string;
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

function processes(): number[] {
  return readdirSync('/proc').map(Number).filter((pid) => Number.isInteger(pid) && running(pid));
}

/** The ffprobe processes probing `session`'s stream, found by the placeholder that stands for its URI. */
function probersOf(session: string): number[] {
  return processes().filter((pid) => {
    const line = commandLine(pid);
    return line.includes('ffprobe') && line.includes(` -i ${placeholderOf(session)}`);
  });
}

/** The processes under `ancestor`, however deep. */
function descendantsOf(ancestor: number): number[] {
  const parents = new Map(processes().map((pid) => [pid, stat(pid)?.ppid]));
  const descends = (pid: number): boolean => {
    for (let at = parents.get(pid); at !== undefined && at > 1; at = parents.get(at)) if (at === ancestor) return true;
    return false;
  };
  return [...parents.keys()].filter(descends);
}

/**
 * Whether the process holds a socket besides its standard streams: a decoder opens one only in
 * main(), after the egress guard's constructor has handed over the URI and wiped its variable.
 */
function pastMain(pid: number): boolean {
  try {
    return readdirSync(`/proc/${pid}/fd`).some((fd) => Number(fd) > 2 && readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith('socket:'));
  } catch {
    return false;
  }
}

function readProc(pid: number, file: 'cmdline' | 'environ' | 'comm'): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/${file}`, 'latin1');
  } catch {
    return undefined;
  }
}

async function decoderCpuSeconds(metricsUrl: string): Promise<number> {
  const samples = parsePrometheusText(await (await httpRequest(`${metricsUrl}/metrics`)).text);
  return samples
    .filter((sample) => sample.name === 'emo_session_cpu_seconds_total' && sample.labels.part === 'decoder')
    .reduce((sum, sample) => sum + sample.value, 0);
}

async function createSession(name: string, streamUri: string): Promise<string> {
  const created = await services.api('POST', '/v1/sessions', { body: { name, streamUri } });
  assert.is(created.status, 201, JSON.stringify(created.body));
  return created.body._id;
}

/** The one ffmpeg pulling `session`'s stream, once there is one that runs. */
async function pullerOf(session: string): Promise<number> {
  let pid: number | undefined;
  await waitUntil(`an ffmpeg pulling the stream of ${session}`, async () => {
    pid = pullersOf(session).find((puller) => running(puller.pid))?.pid;
    return pid !== undefined;
  }, 60_000);
  return pid as number;
}

test.before(async () => {
  services = await startServices({ name: 'decoder-spawner', env: { STREAM_UNREACHABLE_SECONDS: '600' } });
  rtmp = await startStreamServer('decoder-spawner');
  clip = await makeClip(
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
  live = await createSession('spawned', rtmp.url('spawned'));
  await services.waitForSession(live, (session) => session.meta.workerState === 'working', 60_000);
  const ffmpeg = await pullerOf(live);
  const spawner = stat(ffmpeg)!.ppid;
  assert.is.not(spawner, host.pid, 'not a child of the actor host');
  assert.is(stat(spawner)?.ppid, host.pid, "the spawner is the host's child");
  assert.match(commandLine(spawner), /spawner-process-\w+\.mjs/);
  // The media goes to unix sockets in the host's own directory under the run dir.
  assert.match(commandLine(ffmpeg), new RegExp(` unix:${join(config.varDir, 'run')}/decoders-${host.pid}-\\w+/\\d+-audio\\.sock `));
  // The pid the spawner relayed is the one whose /proc the host reads for the session's cost.
  await waitUntil('decoder CPU counted for the session', async () => (await decoderCpuSeconds(services.metrics.hosts[0]!)) > 0, 60_000);
});

test('the stream key is on no decoder command line, nor in a decoder environment once it runs', async () => {
  const host = services.hosts[0]!;
  const key = 'secret-key-XYZ';
  const uri = rtmp.url(key);
  const keyed = publish(clip, uri);
  /** Every ffprobe and ffmpeg under the host seen while the session starts, by pid. */
  const decoders = new Map<number, { program: string; commandLine: string; environmentRead: boolean }>();
  const leaks = new Set<string>();
  const scan = () => {
    for (const pid of descendantsOf(host.pid)) {
      const program = readProc(pid, 'comm')?.trim();
      if (program !== 'ffmpeg' && program !== 'ffprobe') continue;
      const line = readProc(pid, 'cmdline');
      if (line === undefined) continue;
      const seen = decoders.get(pid) ?? { program, commandLine: line.split('\0').join(' '), environmentRead: false };
      decoders.set(pid, seen);
      if (line.includes(key)) leaks.add(`${program} ${pid}'s command line`);
      if (!pastMain(pid)) continue;
      const environment = readProc(pid, 'environ');
      if (environment === undefined) continue;
      if (environment.includes(key) || environment.includes('EMO_STREAM_URI')) leaks.add(`${program} ${pid}'s environment`);
      seen.environmentRead = true;
    }
  };
  let watching = true;
  const watcher = (async () => {
    while (watching) {
      scan();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  try {
    await waitForStream(uri);
    const id = await createSession('keyed', uri);
    // Working means media flows: ffmpeg opened the stream by its real URI, not by the placeholder.
    await services.waitForSession(id, (session) => session.meta.workerState === 'working' && session.meta.mediaSeconds > 2, 60_000);
    await waitUntil('rows of the keyed session stored', async () => {
      const features = await services.api('GET', `/v1/sessions/${id}/audio/features?granularity=5`);
      return features.status === 200 && features.body.timeline.length > 0;
    }, 60_000);
    assert.equal([...leaks], []);
    await waitUntil("the session's ffprobe and ffmpeg read after start", async () => {
      const ours = [...decoders.values()].filter((decoder) => decoder.commandLine.includes(` -i ${placeholderOf(id)}rtmp://127.0.0.1:`));
      return ['ffprobe', 'ffmpeg'].every((program) => ours.some((decoder) => decoder.program === program && decoder.environmentRead));
    }, 30_000);
    assert.equal([...leaks], []);
    await services.api('POST', `/v1/sessions/${id}/stop`);
  } finally {
    watching = false;
    await watcher;
    await keyed.stop();
  }
});

test('a spawner killed is started again: the session pulls on through the new one, the orphaned ffmpeg exits', async () => {
  const host = services.hosts[0]!;
  const orphan = await pullerOf(live);
  const killed = stat(orphan)!.ppid;
  const before = (await services.waitForSession(live, () => true)).meta.mediaSeconds as number;
  process.kill(killed, 'SIGKILL');
  let ffmpeg: number | undefined;
  await waitUntil('a new ffmpeg from a new spawner', async () => {
    ffmpeg = pullersOf(live).find((puller) => puller.pid !== orphan && running(puller.pid))?.pid;
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
  const trickling = `rtmp://127.0.0.1:${tricklerPort}/live/held`;
  const held = await createSession('held', trickling);
  const ffmpeg = await pullerOf(live);
  let ffprobe: number | undefined;
  await waitUntil('an ffprobe held by the trickling server', async () => {
    ffprobe = probersOf(held)[0];
    return ffprobe !== undefined;
  }, 60_000);
  const spawner = stat(ffmpeg)!.ppid;
  assert.is(stat(ffprobe!)?.ppid, spawner, 'ffprobe is the spawner\'s child too');
  process.kill(host.pid, 'SIGKILL');
  await waitUntil('the host\'s decoders and spawner to be gone', async () => ![ffmpeg, ffprobe!, spawner].some(running), GONE_MS);
  assert.equal(pullersOf(live).filter((puller) => running(puller.pid)), []);
  assert.equal(probersOf(held), []);
  // A host for the sessions left active, so that stopping them at the end is answered.
  await services.startHost();
});

test.run();

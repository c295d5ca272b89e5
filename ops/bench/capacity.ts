// Capacity of one actor host on this machine: N realistic live streams (720p30 H.264 at
// 2.5 Mbit/s, four moving faces, continuous speech) published on loopback through a local RTMP
// server, analysed by the real service (NATS, ClickHouse, a storage service, one actor host, a
// gateway, each a process of its own), sessions created through the REST API. For each N it
// measures, over a window after a warm-up: CPU per process kind, frames analysed and dropped,
// how late the live rows arrive, and whether media keeps up with the wall clock; then the same
// streams merely decoded by bare ffmpeg, the floor it is compared with. Method and columns:
// ops/bench/README-capacity.md.
//
//   node --import tsx ops/bench/capacity.ts [--n 1,4,8,12,16,20] [--window 60] [--warmup 20] [--floor 30] [--profile DIR] [--admission host] [--stagger S] [--noise pink:10]
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { connect } from '@nats-io/transport-node';
import { ffprobePath } from '../../actors/ingest/index.ts';
import { type Config, readConfig } from '../../bus/index.ts';
import { readOpsConfig } from '../ops-config.ts';
import { parsePrometheusText, total } from '../support/prometheus-text.ts';
import { publish, waitForStream, type Publisher } from '../support/streams/publish.ts';
import { startRtmpServer, type RtmpServer } from '../support/streams/rtmp-server.ts';
import { freePort, startClickHouse, startNats, startService, waitUntil } from '../stack/index.ts';
import { startServices, type Services } from '../support/services.ts';
import { capacityClip, type ClipNoise } from './lib/capacity-clip.ts';
import { capacityCharts, capacityMarkdown, capacityTables, SERVICE_KINDS, type CapacityResult, type Failure, type Spread } from './lib/capacity-report.ts';
import { closeSessions, openSessions, readSessions, type OpenSession, type SessionReading } from './lib/capacity-sessions.ts';
import { LATENCY_KINDS, LiveRows } from './lib/live-rows.ts';
import { plotCharts } from './lib/plot.ts';
import { cpuBetween, ProcessCpu, type CpuReading } from './lib/process-cpu.ts';
import { mean, percentile } from './lib/stats.ts';

type Kind = (typeof SERVICE_KINDS)[number] | 'publishers' | 'floor' | 'bench';

interface Settings {
  sessions: number[];
  windowSeconds: number;
  warmupSeconds: number;
  floorSeconds: number;
  profileDir?: string;
  /** The host admits sessions as configured (the defaults), refusals retried, instead of taking all N. */
  hostAdmission: boolean;
  /** Seconds between the starts of one stream's publisher and the next's. */
  staggerSeconds: number;
  noise: ClipNoise | undefined;
}

/** What runs for the whole benchmark, shared by every N. */
interface Bench {
  services: Services;
  rtmp: RtmpServer;
  cpu: ProcessCpu<Kind>;
  rows: LiveRows;
  hostMetrics: string;
  clip: string;
  ffmpegPath: string;
  ffprobePath: string;
}

/** Stops of what was started, run in reverse order at the end, whatever happened. */
type Teardown = { name: string; stop: () => Promise<unknown> }[];

interface HostCounters {
  framesAnalysed: number;
  framesDropped: number;
  speechDropped: number;
  audioShedSeconds: number;
  transcriptionCpuTiny: number;
  transcriptionCpuBase: number;
  faceEffortReductions: number;
  faceDetectorCalls: number;
  faceModelSeconds: number;
  rowsPublished: number;
  sessionsActive: number;
}

/** The service at one edge of the window. */
interface Snapshot {
  at: number;
  cpu: CpuReading;
  counters: HostCounters;
  records: Map<string, SessionReading | undefined>;
}

// A worker connects, probes and starts within seconds on a quiet machine; 20 at once on two
// busy cores take longer.
const START_TIMEOUT_MS = 90_000;
// With the host's own admission: how long a refused create is tried again, as a client would.
const RETRY_REFUSED_MS = 60_000;
// Bare decoders connect and fill their first GOP before their CPU is counted.
const FLOOR_SETTLE_MS = 5000;
const SESSIONS_END_TIMEOUT_MS = 60_000;
// Debian's Chromium, as the dashboard test drives it.
const CHROMIUM = '/usr/bin/chromium';

const startedAt = Date.now();
const progress = (message: string) => {
  const seconds = Math.round((Date.now() - startedAt) / 1000);
  console.log(`[${String(Math.floor(seconds / 60)).padStart(2, '0')}:${String(seconds % 60).padStart(2, '0')}] ${message}`);
};

await main();

async function main(): Promise<void> {
  const settings = parseSettings(process.argv.slice(2));
  const config = readConfig();
  const tooling = readOpsConfig();
  const stopping = new AbortController();
  const onSignal = () => {
    if (stopping.signal.aborted) return progress('still stopping what was started...');
    progress('interrupted: stopping everything this benchmark started');
    stopping.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const teardown: Teardown = [];
  const results: CapacityResult[] = [];
  const skipped: string[] = [];
  const outputs = outputFiles(config);
  let code = 0;
  try {
    progress('building the clip (once; cached in var/bench/capacity-clip)');
    const clip = await capacityClip({
      dir: join(config.varDir, 'bench', 'capacity-clip'),
      mediaDir: tooling.mediaDir,
      ffmpegPath: config.ffmpegPath,
      noise: settings.noise,
    });
    const bench = await startBench(config, clip, settings, teardown);
    for (const n of settings.sessions) {
      stopping.signal.throwIfAborted();
      try {
        results.push(await measureLoad(bench, n, settings, stopping.signal));
        console.log(`\n${capacityTables(results)}\n`);
      } catch (error) {
        if (stopping.signal.aborted) throw error;
        skipped.push(`${n} sessions: not measured: ${(error as Error).message}`);
        progress(skipped.at(-1)!);
      }
      writeOutputs(results, skipped, settings, clip, outputs, config);
    }
    if (results.length === 0) throw new Error('no load was measured');
    await plotCharts(capacityCharts(results), outputs.plot, { nodeModules: join(config.projectRoot, 'node_modules'), chromiumPath: CHROMIUM });
    progress(`written: ${relative(config.projectRoot, outputs.markdown)}, ${relative(config.projectRoot, outputs.raw)}, ${relative(config.projectRoot, outputs.plot)}`);
  } catch (error) {
    code = stopping.signal.aborted ? 130 : 1;
    if (!stopping.signal.aborted) console.error(error);
  } finally {
    for (const { name, stop } of teardown.reverse()) {
      await stop().catch((error: Error) => console.error(`stopping ${name}: ${error.message}`));
    }
    progress('stopped everything it started');
  }
  process.exit(code);
}

function parseSettings(argv: string[]): Settings {
  const { values } = parseArgs({
    args: argv,
    options: {
      n: { type: 'string', default: '1,4,8,12,16,20' },
      window: { type: 'string', default: '60' },
      warmup: { type: 'string', default: '20' },
      floor: { type: 'string', default: '30' },
      // A folder for CPU profiles of the service's processes, written when they stop;
      // ops/bench/profile-summary.ts reads them.
      profile: { type: 'string' },
      // `bench`: one host takes all N at once, whatever it sustains. `host`: the host's admission
      // as configured decides, and refused creates are retried for 60 s.
      admission: { type: 'string', default: 'bench' },
      // Seconds between publishers' starts, so the streams are not in step (0: all at once).
      stagger: { type: 'string', default: '0' },
      // Background noise under the clip's speech, `pink:10` or `music:10` (kind:SNR in dB), to
      // measure what noisy speech costs (the service hears it with Moonshine base).
      noise: { type: 'string' },
    },
  });
  if (!['bench', 'host'].includes(values.admission)) throw new Error(`--admission takes bench or host, got "${values.admission}"`);
  const positive = (name: string, text: string) => {
    const value = Number(text);
    if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} takes whole numbers >= 1, got "${text}"`);
    return value;
  };
  return {
    sessions: values.n.split(',').map((text) => positive('n', text.trim())),
    windowSeconds: positive('window', values.window),
    warmupSeconds: positive('warmup', values.warmup),
    floorSeconds: positive('floor', values.floor),
    profileDir: values.profile === undefined ? undefined : resolve(values.profile),
    hostAdmission: values.admission === 'host',
    staggerSeconds: values.stagger === '0' ? 0 : positive('stagger', values.stagger),
    noise: values.noise === undefined ? undefined : parseNoise(values.noise),
  };
}

function parseNoise(text: string): ClipNoise {
  const [kind, snr] = text.split(':');
  const snrDb = Number(snr);
  if ((kind !== 'pink' && kind !== 'music') || !Number.isFinite(snrDb)) throw new Error(`--noise takes pink:<dB> or music:<dB>, got "${text}"`);
  return { kind, snrDb };
}

/** What makes every service process profile itself (lib/cpu-profile-hook.ts) into `dir`. */
function profileEnv(dir: string): Record<string, string> {
  mkdirSync(dir, { recursive: true });
  const hook = fileURLToPath(new URL('./lib/cpu-profile-hook.ts', import.meta.url));
  return { NODE_OPTIONS: `--import tsx --import ${hook}`, CPU_PROFILE_DIR: dir };
}

/** NATS, ClickHouse, the RTMP server and the service; each one's stop goes on `teardown`. */
async function startBench(config: Config, clip: string, settings: Settings, teardown: Teardown): Promise<Bench> {
  const dir = join(config.varDir, 'bench', `capacity-${process.pid}`);
  teardown.push({ name: 'the data folder', stop: async () => rmSync(dir, { recursive: true, force: true }) });
  // The RTMP server and ffprobe's stream checks are the load generator, as the publishers are.
  const cpu = new ProcessCpu<Kind>({ self: 'bench', load: 'publishers' });
  teardown.push({ name: 'the CPU sampler', stop: async () => cpu.stop() });

  progress('starting NATS, ClickHouse and the RTMP server');
  const nats = await startNats({ dir: join(dir, 'nats'), port: await freePort() });
  teardown.push({ name: 'NATS', stop: () => nats.stop() });
  cpu.watch(nats.pid, { self: 'nats', descendants: 'nats' });
  const clickhouse = await startClickHouse({ dir: join(dir, 'clickhouse'), httpPort: await freePort(), tcpPort: await freePort() });
  teardown.push({ name: 'ClickHouse', stop: () => clickhouse.stop() });
  cpu.watch(clickhouse.pid, { self: 'clickhouse', descendants: 'clickhouse' });
  const rtmpPort = await freePort();
  const rtmp = await startRtmpServer({ dir: join(dir, 'rtmp'), rtmpPort, rtmpsPort: await freePort() });
  teardown.push({ name: 'the RTMP server', stop: () => rtmp.stop() });

  progress('starting the storage service, the actor host and the gateway');
  const services = await startServices({
    name: 'bench-capacity',
    env: {
      NATS_URL: nats.url,
      CLICKHOUSE_URL: clickhouse.url,
      CLICKHOUSE_DATABASE: 'emotions_bench',
      // One host takes every session of the largest load (sized for so many that its reservations
      // hold none back), each at full effort whatever it costs (a session may cost the whole host:
      // none is held to a budget or stopped for its cost), unless its own admission is measured:
      // then as configured (this process's environment, else the defaults).
      ...(settings.hostAdmission ? { HOST_CAPACITY: String(config.hostCapacity) } : { HOST_CAPACITY: '100000', SESSION_BUDGET_CORES: String(availableParallelism()) }),
      // Exactly the loopback RTMP server, in the list form production uses for private cameras.
      ALLOW_PRIVATE_STREAM_HOSTS: `127.0.0.1:${rtmpPort}`,
      ...(settings.profileDir ? profileEnv(settings.profileDir) : {}),
    },
  });
  teardown.push({ name: 'the service', stop: () => services.stop() });
  cpu.watch(services.hosts[0]!.pid, { self: 'host', descendants: 'ffmpeg' });
  cpu.watch(services.storage.pid, { self: 'storage', descendants: 'storage' });
  cpu.watch(services.gateway.pid, { self: 'gateway', descendants: 'gateway' });

  const nc = await connect({ servers: nats.url, name: 'capacity bench rows' });
  const rows = new LiveRows(nc);
  teardown.push({ name: 'the row subscription', stop: async () => { rows.close(); await nc.close(); } });
  return { services, rtmp, cpu, rows, hostMetrics: services.metrics.hosts[0]!, clip, ffmpegPath: config.ffmpegPath, ffprobePath: ffprobePath(config.ffmpegPath) };
}

/** One N: publish, analyse and measure, then decode bare for the floor; stops its publishers. */
async function measureLoad(bench: Bench, n: number, settings: Settings, signal: AbortSignal): Promise<CapacityResult> {
  const streams = Array.from({ length: n }, (_, i) => {
    const name = `capacity-${n}-${i + 1}`;
    return { name, uri: bench.rtmp.url(name) };
  });
  progress(`${n} sessions: publishing ${n} streams${settings.staggerSeconds ? `, ${settings.staggerSeconds} s apart` : ''}`);
  const publishers: Publisher[] = [];
  try {
    // Staggered, the streams are at different points of the clip, as independent speakers are;
    // otherwise they run nearly in step, everyone finishing a sentence at the same moment.
    for (const [i, { uri }] of streams.entries()) {
      if (i > 0) await sleep(settings.staggerSeconds * 1000, undefined, { signal });
      publishers.push(startPublisher(bench, uri));
    }
    await Promise.all(streams.map(({ uri }) => waitForStream(uri, 30_000, bench.ffprobePath)));
    const window = await measureService(bench, streams, settings, signal);
    // The floor decodes the streams whose sessions were measured, so the ratio compares like with like.
    const measured = new Set(window.sessions.map((session) => session.name));
    const decoded = streams.filter(({ name }) => measured.has(name));
    progress(`${n} sessions: the floor, ${decoded.length} bare decoders for ${settings.floorSeconds} s`);
    const floor = await measureFloor(bench, decoded.map(({ uri }) => uri), settings.floorSeconds, signal);
    return summarise(bench, n, window, floor);
  } finally {
    await Promise.all(publishers.map((publisher) => publisher.stop()));
  }
}

function startPublisher(bench: Bench, uri: string): Publisher {
  const publisher = publish(bench.clip, uri, bench.ffmpegPath);
  bench.cpu.watch(publisher.pid, { self: 'publishers', descendants: 'publishers' });
  return publisher;
}

interface ServiceWindow {
  /** From the first create until media flowed in every session that started. */
  startSeconds: number;
  start: Snapshot;
  end: Snapshot;
  sessions: OpenSession[];
  failures: Failure[];
}

/** Sessions on every stream, a warm-up, the window; the sessions are stopped whatever happens. */
async function measureService(bench: Bench, streams: { name: string; uri: string }[], settings: Settings, signal: AbortSignal): Promise<ServiceWindow> {
  bench.rows.clear();
  const n = streams.length;
  progress(`${n} sessions: creating them and waiting until media flows in each`);
  const creating = Date.now();
  const { created, working, failures } = await openSessions(bench.services, streams, START_TIMEOUT_MS, signal, settings.hostAdmission ? RETRY_REFUSED_MS : 0);
  const startSeconds = (Date.now() - creating) / 1000;
  for (const session of created) bench.rows.follow(session.id, session.createdAt);
  try {
    progress(`${n} sessions: ${working.length} working after ${startSeconds.toFixed(0)} s; warming up for ${settings.warmupSeconds} s`);
    await sleep(settings.warmupSeconds * 1000, undefined, { signal });
    const start = await snapshot(bench, working);
    progress(`${n} sessions: measuring for ${settings.windowSeconds} s`);
    await sleep(settings.windowSeconds * 1000, undefined, { signal });
    const end = await snapshot(bench, working);
    return { startSeconds, start, end, sessions: working, failures };
  } finally {
    await closeSessions(bench.services, created);
    // The floor that follows must not share the machine with the service's ffmpegs.
    await waitUntil('the actor host to end its sessions', async () => (await hostCounters(bench.hostMetrics)).sessionsActive === 0, SESSIONS_END_TIMEOUT_MS)
      .catch((error: Error) => progress(`warning: ${error.message}`));
  }
}

async function snapshot(bench: Bench, sessions: OpenSession[]): Promise<Snapshot> {
  const [counters, records] = await Promise.all([hostCounters(bench.hostMetrics), readSessions(bench.services, sessions)]);
  return { at: Date.now(), cpu: bench.cpu.read(), counters, records };
}

/** The host's counters (actors/metrics.ts) from its /metrics. */
async function hostCounters(metricsUrl: string): Promise<HostCounters> {
  const response = await fetch(`${metricsUrl}/metrics`);
  if (!response.ok) throw new Error(`${metricsUrl}/metrics answered ${response.status}`);
  const samples = parsePrometheusText(await response.text());
  const value = (name: string, labels: Record<string, string> = {}) => total(samples, name, labels) ?? NaN;
  // A model's counter shows once it has transcribed a segment.
  const transcriptionCpu = (model: string) => total(samples, 'emo_transcription_cpu_seconds_total', { model }) ?? 0;
  return {
    framesAnalysed: value('emo_frames_analysed_total'),
    framesDropped: value('emo_frames_dropped_total'),
    speechDropped: value('emo_speech_segments_dropped_total'),
    audioShedSeconds: value('emo_audio_shed_seconds_total'),
    transcriptionCpuTiny: transcriptionCpu('tiny'),
    transcriptionCpuBase: transcriptionCpu('base'),
    faceEffortReductions: value('emo_face_effort_reductions_total'),
    faceDetectorCalls: value('emo_inference_duration_seconds_count', { model: 'face_detector' }),
    faceModelSeconds: value('emo_inference_duration_seconds_sum', { model: 'face_detector' }) + value('emo_inference_duration_seconds_sum', { model: 'expressions' }),
    rowsPublished: value('emo_rows_published_total'),
    sessionsActive: value('emo_sessions_active'),
  };
}

/** Bare ffmpeg decoding each stream in full, to nothing, with one decoder thread as the service's ffmpeg has. */
async function measureFloor(bench: Bench, uris: string[], floorSeconds: number, signal: AbortSignal): Promise<CapacityResult['floor']> {
  const decoders = uris.map((uri) => {
    const decoder = startService('floor-decoder', bench.ffmpegPath, ['-hide_banner', '-nostdin', '-nostats', '-loglevel', 'error', '-threads', '1', '-i', uri, '-f', 'null', '-'], { graceMs: 2000 });
    bench.cpu.watch(decoder.pid, { self: 'floor', descendants: 'floor' });
    return decoder;
  });
  let exited = 0;
  for (const decoder of decoders) void decoder.exited.then(() => exited++);
  try {
    await sleep(FLOOR_SETTLE_MS, undefined, { signal });
    const before = bench.cpu.read();
    await sleep(floorSeconds * 1000, undefined, { signal });
    const used = cpuBetween(before, bench.cpu.read());
    return { cores: (used.byKind.get('floor') ?? 0) / used.wallSeconds, seconds: used.wallSeconds, decoders: decoders.length - exited };
  } finally {
    await Promise.all(decoders.map((decoder) => decoder.stop()));
  }
}

function summarise(bench: Bench, n: number, window: ServiceWindow, floor: CapacityResult['floor']): CapacityResult {
  const { start, end } = window;
  const used = cpuBetween(start.cpu, end.cpu);
  const coresOf = (kind: Kind) => (used.byKind.get(kind) ?? 0) / used.wallSeconds;
  const cores = Object.fromEntries(SERVICE_KINDS.map((kind) => [kind, coresOf(kind)])) as CapacityResult['cores'];

  // Sessions working at both edges of the window are the ones measured; any other is a failure.
  const failures = [...window.failures];
  const measured: { before: SessionReading; after: SessionReading }[] = [];
  for (const session of window.sessions) {
    const before = start.records.get(session.id);
    const after = end.records.get(session.id);
    if (before?.workerState === 'working' && after?.workerState === 'working') measured.push({ before, after });
    else failures.push({ session: session.name, stage: 'window', reason: `worker ${before?.workerState ?? 'unreadable'} at the start, ${after?.workerState ?? 'unreadable'} at the end${after?.ended ? ` (${after.ended})` : ''}` });
  }
  const mediaPerWall = measured.map(({ before, after }) => (after.mediaSeconds - before.mediaSeconds) / ((after.healthCheckAt - before.healthCheckAt) / 1000));
  const sessionCores = measured.flatMap(({ after }) => (after.cpuCores === undefined ? [] : [after.cpuCores]));

  const delta = (name: keyof HostCounters) => end.counters[name] - start.counters[name];
  const sessionSeconds = window.sessions.length * used.wallSeconds;
  const analysed = delta('framesAnalysed');
  const dropped = delta('framesDropped');
  const latencies = bench.rows.latencies(start.at, end.at);
  return {
    sessions: n,
    measured: measured.length,
    failures,
    startSeconds: window.startSeconds,
    windowSeconds: used.wallSeconds,
    cores,
    serviceCores: SERVICE_KINDS.reduce((sum, kind) => sum + cores[kind], 0),
    publisherCores: coresOf('publishers'),
    otherCores: used.othersSeconds / used.wallSeconds,
    benchCores: coresOf('bench'),
    floor,
    frames: { analysedPerSessionSecond: analysed / sessionSeconds, droppedPerSessionSecond: dropped / sessionSeconds, droppedShare: dropped / (analysed + dropped) },
    speechSegmentsDropped: delta('speechDropped'),
    audioShedSeconds: delta('audioShedSeconds'),
    transcriptionCores: { tiny: delta('transcriptionCpuTiny') / used.wallSeconds, base: delta('transcriptionCpuBase') / used.wallSeconds },
    faceEffortReductions: delta('faceEffortReductions'),
    face: { detectorCallsPerSecond: delta('faceDetectorCalls') / used.wallSeconds, modelCores: delta('faceModelSeconds') / used.wallSeconds },
    rowsPublishedPerSecond: delta('rowsPublished') / used.wallSeconds,
    latency: Object.fromEntries(LATENCY_KINDS.map((kind) => [kind, spreadOf(latencies[kind])])) as CapacityResult['latency'],
    mediaPerWall: { min: mediaPerWall.length ? Math.min(...mediaPerWall) : NaN, mean: mediaPerWall.length ? mean(mediaPerWall) : NaN },
    sessionCores: { min: sessionCores.length ? Math.min(...sessionCores) : NaN, mean: sessionCores.length ? mean(sessionCores) : NaN, max: sessionCores.length ? Math.max(...sessionCores) : NaN },
    facesPerSecond: bench.rows.meanFaces(start.at, end.at),
    loadAverage: loadavg()[0]!,
  };
}

function spreadOf(values: number[]): Spread {
  return { rows: values.length, p50: percentile(values, 50), p95: percentile(values, 95), max: values.length ? Math.max(...values) : NaN };
}

interface Outputs {
  markdown: string;
  raw: string;
  plot: string;
}

function outputFiles(config: Config): Outputs {
  const stamp = new Date(startedAt).toISOString().replace(/[:.]/g, '-');
  return {
    markdown: join(config.projectRoot, 'ops', 'bench', 'capacity-results.md'),
    raw: join(config.varDir, 'bench', `capacity-${stamp}.json`),
    plot: join(config.projectRoot, 'ops', 'bench', 'capacity.png'),
  };
}

/** The results so far, after every N: an interrupted run keeps what it measured. */
function writeOutputs(results: CapacityResult[], skipped: string[], settings: Settings, clip: string, outputs: Outputs, config: Config): void {
  const run = {
    startedAt: new Date(startedAt),
    command: `node --import tsx ops/bench/capacity.ts --n ${settings.sessions.join(',')} --window ${settings.windowSeconds} --warmup ${settings.warmupSeconds} --floor ${settings.floorSeconds}${settings.hostAdmission ? ' --admission host' : ''}${settings.staggerSeconds ? ` --stagger ${settings.staggerSeconds}` : ''}${settings.noise ? ` --noise ${settings.noise.kind}:${settings.noise.snrDb}` : ''}`,
    machine: `${cpus().length} × ${cpus()[0]?.model.trim() ?? 'unknown CPU'}, Node ${process.version}`,
    clip: relative(config.projectRoot, clip),
    rawFile: relative(config.projectRoot, outputs.raw),
  };
  mkdirSync(join(config.varDir, 'bench'), { recursive: true });
  writeFileSync(outputs.raw, `${JSON.stringify({ run, settings, results, skipped }, null, 2)}\n`);
  const notes = skipped.length ? `\n${skipped.map((line) => `- ${line}`).join('\n')}\n` : '';
  writeFileSync(outputs.markdown, capacityMarkdown(results, run) + notes);
}

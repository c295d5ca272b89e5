// What starting decoders costs the main thread of a process as large as an actor host: it
// fills ~1 GB (Buffers, every page touched, as the models' weights are), then starts a burst of
// short processes (`ffmpeg -version`, as quick as an ffprobe that fails), one per turn of its
// event loop, directly with
// child_process.spawn, and through the decoder spawner (actors/ingest/decoder-spawner.ts), in
// turns. Reports the event loop's delay while each burst runs (perf_hooks.monitorEventLoopDelay),
// the time the spawn calls held the thread, and how long until every process had exited.
// Usage: node --import tsx ops/bench/decoder-spawn.ts [MB held] [processes per burst] [rounds]
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createLog, readConfig } from '../../bus/index.ts';
import { decoderEnvironment, DecoderSpawner } from '../../actors/ingest/index.ts';
import { elapsedMs, fixed, mean, printTable } from './lib/stats.ts';

const [heldMb = 1024, burst = 20, rounds = 3] = process.argv.slice(2).map(Number);
const config = readConfig();
const args = ['-hide_banner', '-version'];
const env = decoderEnvironment();

type Start = () => Promise<void>;

const direct: Start = () =>
  new Promise((resolve, reject) => {
    const child = spawn(config.ffmpegPath, args, { stdio: ['ignore', 'ignore', 'pipe'], env });
    child.stderr.resume();
    child.once('error', reject);
    child.once('close', () => resolve());
  });

function throughSpawner(decoders: DecoderSpawner): Start {
  return () =>
    new Promise((resolve) => {
      decoders.run({ file: config.ffmpegPath, args, env }).once('exit', () => resolve());
    });
}

interface Burst {
  maxLagMs: number;
  p99LagMs: number;
  heldMs: number;
  doneMs: number;
}

async function measure(start: Start): Promise<Burst> {
  const lag = monitorEventLoopDelay({ resolution: 1 });
  lag.enable();
  const began = performance.now();
  let heldMs = 0;
  const exits: Promise<void>[] = [];
  // One start per turn of the event loop, as the requests that cause them arrive: the delay
  // monitor sees each turn a spawn holds.
  for (let i = 0; i < burst; i++) {
    await new Promise((resolve) => setImmediate(resolve));
    const called = performance.now();
    exits.push(start());
    heldMs += elapsedMs(called);
  }
  await Promise.all(exits);
  const doneMs = elapsedMs(began);
  lag.disable();
  return { maxLagMs: lag.max / 1e6, p99LagMs: lag.percentile(99) / 1e6, heldMs, doneMs };
}

// Written to, so that every page is resident: a fork copies the page tables of what is resident.
const held = Array.from({ length: Math.ceil(heldMb / 64) }, () => Buffer.alloc(64 * 1024 ** 2).fill(1));
const decoders = await DecoderSpawner.start({ runDir: join(config.varDir, 'run'), log: createLog({ ...config, logLevel: 'silent' }) });
const results = { direct: [] as Burst[], spawner: [] as Burst[] };
try {
  // One of each first, unmeasured: the spawner's start and the first exec warm up.
  await measure(direct);
  await measure(throughSpawner(decoders));
  for (let round = 0; round < rounds; round++) {
    results.direct.push(await measure(direct));
    results.spawner.push(await measure(throughSpawner(decoders)));
  }
} finally {
  await decoders.close();
}

const rssMb = process.memoryUsage().rss / 1024 ** 2;
const row = (name: string, bursts: Burst[]) => [
  name,
  bursts.map((b) => fixed(b.maxLagMs, 0)).join(' / '),
  fixed(mean(bursts.map((b) => b.p99LagMs)), 0),
  fixed(mean(bursts.map((b) => b.heldMs / burst)), 1),
  fixed(mean(bursts.map((b) => b.doneMs)), 0),
];
printTable(
  `${burst} processes at once from a process holding ${fixed(rssMb, 0)} MB resident (${held.length} x 64 MB), ${rounds} rounds`,
  ['started', 'event loop max delay, ms (each round)', 'p99 delay, ms', 'spawn call, ms each', 'all exited, ms'],
  [row('directly (child_process.spawn)', results.direct), row('through the decoder spawner', results.spawner)],
);

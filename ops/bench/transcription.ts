// Transcription speed: the real-time factor of Moonshine (tiny, or base with `base` as the first
// argument; processing time / audio length)
// on the JFK sample and on 10-20 s spoken passages, and how many sessions of continuous speech
// one machine keeps up with: N transcript queues spread over one host process per core, each
// fed one segment as soon as its audio has been spoken, N rising until transcripts come later
// than the next segment of the same speaker.
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, rmSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readConfig } from '../../bus/index.ts';
import { type SpeechModel, thisProcessorMultipliesSignedBytesExactly } from '../../actors/models/index.ts';
import { SpeechToText } from '../../actors/speech/index.ts';
import type { LevelReport, LevelRequest } from './lib/transcription-host.ts';
import { SAMPLE_RATE, jfkSamples, spokenSamples } from './lib/speech.ts';
import { cpuSecondsOf, elapsedMs, fixed, percentile, printTable } from './lib/stats.ts';

const config = readConfig();
const signedWeights = thisProcessorMultipliesSignedBytesExactly();
const model = parseModel(process.argv[2]);

function parseModel(argument: string | undefined): SpeechModel {
  if (argument === undefined || argument === 'tiny' || argument === 'base') return argument ?? 'tiny';
  throw new Error(`usage: node --import tsx ops/bench/transcription.ts [tiny|base], got "${argument}"`);
}

const TARGET_RTF = 0.1;
const REPEATS = 3;
/** How long each concurrency level is fed, in seconds of real time. */
const FEED_SECONDS = 40;
const STEPS = [0.5, 0.75, 1, 1.25, 1.5, 2];

const PASSAGES = [
  'The weather service expects light rain in the morning, clearing by noon, with a gentle breeze from the west and mild temperatures. Tomorrow should be dry and a little warmer.',
  'Our team reviewed the quarterly figures this afternoon. Sales grew in every region except the north, where two stores closed for repairs for most of the summer. We expect a stronger result next quarter, once both stores open again.',
  'When the museum opened its new wing, visitors lined up around the block. The paintings had been restored over three years by a small group of experts, who worked slowly and carefully so that every colour would look as bright as the day it was painted. Many people came back a second time with their friends.',
];

interface Clip {
  name: string;
  samples: Float32Array;
}

const seconds = (samples: Float32Array) => samples.length / SAMPLE_RATE;

async function loadClips(dir: string): Promise<Clip[]> {
  const clips: Clip[] = [{ name: 'JFK sample', samples: await jfkSamples() }];
  for (const [i, text] of PASSAGES.entries()) clips.push({ name: `spoken passage ${i + 1}`, samples: await spokenSamples(text, dir, `passage-${i + 1}`) });
  return clips;
}

async function realTimeFactors(stt: SpeechToText, clips: Clip[]) {
  await stt.transcribe(clips[0]!.samples); // warm-up
  const results = [];
  for (const clip of clips) {
    const timesMs: number[] = [];
    let text = '';
    let cpu = 0;
    for (let i = 0; i < REPEATS; i++) {
      const started = performance.now();
      const run = await cpuSecondsOf(() => stt.transcribe(clip.samples));
      timesMs.push(elapsedMs(started));
      cpu += run.cpuSeconds;
      text = run.result;
    }
    const ms = percentile(timesMs, 50);
    results.push({ clip, ms, cpuMs: (1000 * cpu) / REPEATS, rtf: ms / 1000 / seconds(clip.samples), text });
  }
  return results;
}

interface LevelResult {
  sessions: number;
  pushed: number;
  done: number;
  dropped: number;
  latencies: number[];
  cpuCores: number;
  keptUp: boolean;
}

interface Host {
  child: ChildProcess;
  next(): Promise<unknown>;
}

/** One host process per core, as a machine runs its hosts: each has its own models. */
async function startHosts(count: number): Promise<Host[]> {
  return Promise.all(
    Array.from({ length: count }, async () => {
      const child = fork(fileURLToPath(new URL('./lib/transcription-host.ts', import.meta.url)), [model], {
        execArgv: ['--import', 'tsx'],
        serialization: 'advanced',
      });
      const exited = once(child, 'exit').then(([code]) => {
        throw new Error(`transcription host exited (${code})`);
      });
      const host = { child, next: () => Promise.race([once(child, 'message').then(([message]) => message), exited]) };
      await host.next(); // 'ready'
      return host;
    }),
  );
}

/** `sessions` queues fed in real time for FEED_SECONDS, split over the hosts, starts staggered over one segment. */
async function runLevel(hosts: Host[], clips: Clip[], sessions: number, shortestSeconds: number): Promise<LevelResult> {
  const startAt = Date.now() + 1000;
  const reports = await Promise.all(
    hosts.map((host, h) => {
      const first = Math.floor((h * sessions) / hosts.length);
      const request: LevelRequest = {
        clips: clips.map((clip) => clip.samples),
        first,
        count: Math.floor(((h + 1) * sessions) / hosts.length) - first,
        sessions,
        staggerSeconds: shortestSeconds / sessions,
        feedSeconds: FEED_SECONDS,
        startAt,
      };
      host.child.send(request);
      return host.next() as Promise<LevelReport>;
    }),
  );
  const latencies = reports.flatMap((report) => report.latencies);
  const dropped = reports.reduce((sum, report) => sum + report.dropped, 0);
  const wall = Math.max(...reports.map((report) => report.wallSeconds));
  return {
    sessions,
    pushed: reports.reduce((sum, report) => sum + report.pushed, 0),
    done: latencies.length,
    dropped,
    latencies,
    cpuCores: reports.reduce((sum, report) => sum + report.cpuSeconds, 0) / wall,
    keptUp: dropped === 0 && percentile(latencies, 95) < shortestSeconds,
  };
}

const dir = join(config.varDir, 'bench', `transcription-${process.pid}`);
mkdirSync(dir, { recursive: true });
try {
  const clips = await loadClips(dir);
  const stt = await SpeechToText.load(config.modelsDir, model, signedWeights);
  const factors = await realTimeFactors(stt, clips);
  printTable(
    `Moonshine ${model} real-time factor (median of ${REPEATS}, one onnxruntime thread, after one warm-up)`,
    ['audio', 'seconds', 'transcription ms', 'CPU ms', 'RTF', `target < ${TARGET_RTF}`, 'text'],
    factors.map(({ clip, ms, cpuMs, rtf, text }) => [
      clip.name,
      fixed(seconds(clip.samples)),
      fixed(ms, 0),
      fixed(cpuMs, 0),
      fixed(rtf, 3),
      rtf < TARGET_RTF ? 'met' : 'missed',
      text.length > 48 ? `${text.slice(0, 45)}...` : text,
    ]),
  );

  const audio = factors.reduce((sum, { clip }) => sum + seconds(clip.samples), 0);
  const cpu = factors.reduce((sum, { cpuMs }) => sum + cpuMs / 1000, 0);
  const cpuRtf = cpu / audio;
  const cores = availableParallelism();
  const estimate = Math.floor(cores / cpuRtf);
  console.log(
    `CPU real-time factor over all clips: ${fixed(cpuRtf, 3)} -> estimate: ${cores} cores / ${fixed(cpuRtf, 3)} = ${estimate} sessions of continuous speech`,
  );

  const shortest = Math.min(...clips.map((clip) => seconds(clip.samples)));
  const levels: LevelResult[] = [];
  const hosts = await startHosts(cores);
  for (const step of STEPS) {
    const sessions = Math.max(1, Math.round(estimate * step));
    if (levels.some((level) => level.sessions === sessions)) continue;
    const level = await runLevel(hosts, clips, sessions, shortest);
    levels.push(level);
    console.log(`  ${sessions} sessions: ${level.keptUp ? 'kept up' : 'fell behind'}`);
    if (!level.keptUp) break;
  }
  for (const host of hosts) host.child.send('exit');
  printTable(
    `Concurrent sessions of continuous speech, fed in real time for ${FEED_SECONDS} s (${cores} host processes, one per core); kept up = nothing dropped and p95 latency < ${fixed(shortest)} s (the shortest segment)`,
    ['sessions', 'segments', 'transcribed', 'dropped', 'latency p50 s', 'p95 s', 'max s', 'CPU cores used', 'kept up'],
    levels.map((level) => [
      String(level.sessions),
      String(level.pushed),
      String(level.done),
      String(level.dropped),
      fixed(percentile(level.latencies, 50)),
      fixed(percentile(level.latencies, 95)),
      fixed(Math.max(...level.latencies)),
      fixed(level.cpuCores, 2),
      level.keptUp ? 'yes' : 'no',
    ]),
  );
  const best = levels.filter((level) => level.keptUp).at(-1);
  console.log(`measured: ${best ? best.sessions : 0} sessions kept up in real time`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

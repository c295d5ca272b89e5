// What the capacity benchmark measured for one number of sessions, and how it is shown: the
// markdown tables (console and ops/bench/capacity-results.md) and the two charts of the plot.
import { LATENCY_KINDS, type LatencyKind } from './live-rows.ts';
import type { Chart } from './plot.ts';
import { fixed, markdownTable } from './stats.ts';

/** The service's processes, in the order of the table's columns. */
export const SERVICE_KINDS = ['host', 'gateway', 'storage', 'ffmpeg', 'nats', 'clickhouse'] as const;
export type ServiceKind = (typeof SERVICE_KINDS)[number];

export interface Failure {
  session: string;
  /** create, start (never reached `working`), window (left `working` while measured). */
  stage: 'create' | 'start' | 'window';
  reason: string;
}

export interface Spread {
  rows: number;
  p50: number;
  p95: number;
  max: number;
}

export interface CapacityResult {
  sessions: number;
  /** Sessions working through the whole window: the ones the per-session figures are over. */
  measured: number;
  failures: Failure[];
  /** From the first create until media flowed in every session: how long the streams took to connect. */
  startSeconds: number;
  windowSeconds: number;
  /** Cores (CPU seconds per second of the window) per process kind of the service. */
  cores: Record<ServiceKind, number>;
  serviceCores: number;
  /** The load generator: the publishing ffmpegs and the RTMP server. Not in serviceCores. */
  publisherCores: number;
  /** Busy CPU of the machine that is none of ours (other people's work on a shared machine). */
  otherCores: number;
  /** This benchmark process: the row subscription, the scrapes and the /proc sampling. */
  benchCores: number;
  /** The same streams decoded by bare ffmpeg, one decoder thread each; `decoders` still running at the end. */
  floor: { cores: number; seconds: number; decoders: number };
  frames: { analysedPerSessionSecond: number; droppedPerSessionSecond: number; droppedShare: number };
  speechSegmentsDropped: number;
  /** Audio skipped unanalysed because voice analysis was behind (VOICE_MAX_BACKLOG_SECONDS). */
  audioShedSeconds: number;
  /** Cores the transcription threads spent, by model (tiny; base for noisy speech). */
  transcriptionCores: { tiny: number; base: number };
  /** Times the face thread stepped down to less effort per frame to keep up. */
  faceEffortReductions: number;
  /**
   * The face thread's model calls: detector calls a second (each a batch of every session's
   * waiting frames), and the time inside the detector and expression models per second.
   */
  face: { detectorCallsPerSecond: number; modelCores: number };
  rowsPublishedPerSecond: number;
  /** Seconds from the end of the media a row describes to its arrival on NATS. */
  latency: Record<LatencyKind, Spread>;
  /** Media received per second of wall clock, over the window, per session. */
  mediaPerWall: { min: number; mean: number };
  /** Each measured session's own cost as its host measured it (meta.cpuCores at the window's end), in cores. */
  sessionCores: { min: number; mean: number; max: number };
  /** Mean faces per analysed second: the clip shows four. */
  facesPerSecond: number;
  loadAverage: number;
}

const cores = (value: number) => fixed(value, 2);
const seconds = (value: number) => fixed(value, 2);
const spread = ({ p50, p95, max }: Spread) => `${seconds(p50)} / ${seconds(p95)} / ${seconds(max)}`;

const MAIN_HEADER = [
  'sessions', 'total CPU (cores)', 'host', 'gateway', 'storage', 'ffmpeg', 'NATS', 'ClickHouse',
  'floor (bare decode)', 'total/floor', 'frames analysed / dropped per session-s', 'dropped %',
  'video p95 s', 'face p95 s', 'audio p50/p95/max s', 'speech p50/p95/max s', 'media/wall min / mean',
];

function mainRow(result: CapacityResult): string[] {
  const { frames, latency, mediaPerWall } = result;
  const failed = result.sessions - result.measured;
  return [
    failed ? `${result.sessions} (${failed} failed)` : String(result.sessions),
    cores(result.serviceCores),
    ...SERVICE_KINDS.map((kind) => cores(result.cores[kind])),
    result.floor.decoders < result.sessions ? `${cores(result.floor.cores)} (${result.floor.decoders} decoders)` : cores(result.floor.cores),
    fixed(result.serviceCores / result.floor.cores, 1),
    `${fixed(frames.analysedPerSessionSecond, 2)} / ${fixed(frames.droppedPerSessionSecond, 2)}`,
    fixed(100 * frames.droppedShare, 1),
    seconds(latency.video.p95),
    seconds(latency.face.p95),
    spread(latency.audio),
    spread(latency.speech),
    `${fixed(mediaPerWall.min, 3)} / ${fixed(mediaPerWall.mean, 3)}`,
  ];
}

const SIDE_HEADER = [
  'sessions', 'start s', 'publishers (cores, not in total)', 'other work on the machine (cores)', 'bench process (cores)', 'load average (1 min)',
  'faces per analysed second', 'session cost min / mean / max (cores)', 'face effort reductions', 'face detector calls/s', 'face models (cores)', 'speech segments dropped', 'audio shed s', 'transcription cores: tiny / base',
  'rows published/s', 'rows timed (audio/video/face/speech)',
];

function sideRow(result: CapacityResult): string[] {
  return [
    String(result.sessions),
    fixed(result.startSeconds, 0),
    cores(result.publisherCores),
    cores(result.otherCores),
    cores(result.benchCores),
    fixed(result.loadAverage, 1),
    fixed(result.facesPerSecond, 2),
    `${fixed(result.sessionCores.min, 3)} / ${fixed(result.sessionCores.mean, 3)} / ${fixed(result.sessionCores.max, 3)}`,
    String(result.faceEffortReductions),
    fixed(result.face.detectorCallsPerSecond, 1),
    cores(result.face.modelCores),
    String(result.speechSegmentsDropped),
    fixed(result.audioShedSeconds, 1),
    `${fixed(result.transcriptionCores.tiny, 3)} / ${fixed(result.transcriptionCores.base, 3)}`,
    fixed(result.rowsPublishedPerSecond, 1),
    LATENCY_KINDS.map((kind) => result.latency[kind].rows).join(' / '),
  ];
}

export function capacityTables(results: CapacityResult[]): string {
  const failures = results.flatMap((result) =>
    result.failures.map((failure) => `- ${result.sessions} sessions: ${failure.session} (${failure.stage}): ${failure.reason}`));
  return [
    markdownTable(MAIN_HEADER, results.map(mainRow)),
    '',
    markdownTable(SIDE_HEADER, results.map(sideRow)),
    '',
    failures.length ? `Failed sessions:\n\n${failures.join('\n')}` : 'Failed sessions: none.',
  ].join('\n');
}

export interface RunDescription {
  startedAt: Date;
  command: string;
  machine: string;
  clip: string;
  rawFile: string;
}

/** The whole results file: how it was run, then the tables. */
export function capacityMarkdown(results: CapacityResult[], run: RunDescription): string {
  return `# Capacity benchmark: results

Run ${run.startedAt.toISOString()} on ${run.machine}:
\`${run.command}\`. Clip: \`${run.clip}\`. Raw figures: \`${run.rawFile}\`.
What each column means: \`ops/bench/README-capacity.md\`. CPU in cores (CPU seconds per
second of the window), latencies in seconds.

${capacityTables(results)}
`;
}

const COLORS = { service: '#1f77b4', floor: '#ff7f0e', host: '#2ca02c', ffmpeg: '#9467bd' };
const KIND_COLORS: Record<LatencyKind, string> = { audio: '#1f77b4', video: '#2ca02c', face: '#ff7f0e', speech: '#d62728' };

/** Cores against sessions, and p95 row latency per kind against sessions. */
export function capacityCharts(results: CapacityResult[]): Chart[] {
  const sorted = [...results].sort((a, b) => a.sessions - b.sessions);
  const x = sorted.map((result) => result.sessions);
  const finite = (value: number) => (Number.isFinite(value) ? value : null);
  return [
    {
      title: 'CPU of the service and of bare decoding',
      xLabel: 'sessions',
      yLabel: 'cores',
      x,
      series: [
        { label: 'service total', values: sorted.map((r) => finite(r.serviceCores)), color: COLORS.service },
        { label: 'actor host', values: sorted.map((r) => finite(r.cores.host)), color: COLORS.host },
        { label: 'ffmpeg (service)', values: sorted.map((r) => finite(r.cores.ffmpeg)), color: COLORS.ffmpeg },
        { label: 'floor: bare decode', values: sorted.map((r) => finite(r.floor.cores)), color: COLORS.floor, dashed: true },
      ],
    },
    {
      title: 'Row latency, p95 (media end to NATS arrival)',
      xLabel: 'sessions',
      yLabel: 'seconds',
      x,
      // Face rows leave with the video row of their second, so the two lines coincide: face is dashed.
      series: LATENCY_KINDS.map((kind) => ({
        label: kind, values: sorted.map((r) => finite(r.latency[kind].p95)), color: KIND_COLORS[kind], dashed: kind === 'face',
      })),
    },
  ];
}

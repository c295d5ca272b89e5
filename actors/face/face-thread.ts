// The body of the face thread: the face analysis of every stream of the host (detection,
// tracking, expressions, per-second rows), with the detector and classifiers batched across
// streams. onnxruntime-node runs inference on the calling thread, and a batch of frames takes
// tens of milliseconds: here it never holds up the event loop that reads ffmpeg's pipes.
import { getPriority, setPriority } from 'node:os';
import { performance } from 'node:perf_hooks';
import { workerData } from 'node:worker_threads';
import type { FaceSecond, VideoSecond } from '../../bus/contracts/rows.ts';
import { loadAnalysisModels } from './analysis-models.ts';
import { CpuShares } from '../models/cpu-shares.ts';
import { threadPort } from '../models/stream-thread-body.ts';
import { threadCpuSeconds } from '../models/thread-cpu.ts';
import { FaceAnalyzer } from './analyzer.ts';
import { FACE_EFFORT_LADDER, FaceEffort, type Effort, type WeighedStream } from './face-effort.ts';

export interface FaceThreadData {
  modelsDir: string;
  /** FACE_EFFORT_CALM_SECONDS, in ms (FaceEffort). */
  effortCalmMs: number;
}

export type FaceRequest =
  | { type: 'open'; stream: number; session: string; fps: number }
  | { type: 'frame'; stream: number; rgb: Uint8Array; width: number; height: number; second: number }
  /** The host's word on the stream's cost (FaceEffort.setOverBudget). */
  | { type: 'budget'; stream: number; over: boolean };

/** A stream a lowering was chosen among, by its session (FaceEffort's WeighedStream). */
export type WeighedSession = Omit<WeighedStream, 'stream'> & { session: string };

export type FaceReply =
  | { type: 'face'; stream: number; row: FaceSecond }
  | { type: 'video'; stream: number; row: VideoSecond }
  /** The stream is now analysed `level` steps below full effort, doing what `effort` says. */
  | { type: 'effort'; stream: number; level: number; effort: Effort; chosenAmong?: WeighedSession[] }
  /** The thread's CPU seconds spent on the stream since its last such reply. */
  | { type: 'cpu'; stream: number; seconds: number };

const { modelsDir, effortCalmMs } = workerData as FaceThreadData;
/**
 * When the cores are full, face analysis is what gives way: this many nice steps below the rest
 * of the host, the thread gets the CPU ffmpeg, the pipes, voice analysis and transcription leave
 * over, and drops frames (the newest wins), so audio and speech rows stay on time and the face
 * rate falls first. On Linux a nice value is per thread: pid 0 is this thread only.
 */
const FACE_THREAD_NICE_STEPS = 10;
setPriority(Math.min(19, getPriority() + FACE_THREAD_NICE_STEPS));
const port = threadPort<FaceRequest, FaceReply>();
const { faces: models } = await loadAnalysisModels(modelsDir, port.timer);
const effort = new FaceEffort(effortCalmMs);
// A stream's share of the thread's CPU is its share of the thread's work: the time of the model
// calls that carried its frames and faces, each call split among them, and their preparation.
const shares = new CpuShares(threadCpuSeconds, (stream, seconds) => port.post({ type: 'cpu', stream, seconds }));
const EFFORT_REVIEW_MS = 1000;
let loopBefore = performance.eventLoopUtilization();
setInterval(() => {
  const loopNow = performance.eventLoopUtilization();
  // The share of the last second this thread was not waiting for work: analysing, or ready to
  // and waiting for a core.
  const busyShare = performance.eventLoopUtilization(loopNow, loopBefore).utilization;
  loopBefore = loopNow;
  const { changed, saturated, chosenAmong } = effort.review(busyShare);
  const weighed = chosenAmong?.map(({ stream, ...rest }) => ({ session: sessionOf.get(stream) ?? String(stream), ...rest }));
  for (const { stream, level } of changed) {
    if (analyzers.has(stream)) port.post({ type: 'effort', stream, level, effort: { ...FACE_EFFORT_LADDER[level]! }, ...(weighed ? { chosenAmong: weighed } : {}) });
  }
  if (saturated) port.post({ type: 'saturated', ...saturated });
}, EFFORT_REVIEW_MS).unref();
const analyzers = new Map<number, FaceAnalyzer>();
const sessionOf = new Map<number, string>();
const failed = new Set<number>();

function open(id: number, session: string, fps: number): void {
  const streamEffort = effort.open(id, fps);
  sessionOf.set(id, session);
  analyzers.set(
    id,
    new FaceAnalyzer({
      session,
      models,
      fps,
      effort: streamEffort,
      spent: (seconds) => {
        streamEffort.worked(seconds);
        shares.worked(id, seconds);
      },
      onFaceSecond: (row) => port.post({ type: 'face', stream: id, row }),
      onVideoSecond: (row) => port.post({ type: 'video', stream: id, row }),
    }),
  );
}

async function close(id: number, analyzer: FaceAnalyzer): Promise<void> {
  analyzers.delete(id);
  sessionOf.delete(id);
  failed.delete(id);
  effort.close(id);
  try {
    await analyzer.flush();
    port.post({ type: 'closed', stream: id });
  } catch (error) {
    port.post({ type: 'closed', stream: id, error: (error as Error).message });
  }
}

port.serve((request) => {
  if (request.type === 'open') return open(request.stream, request.session, request.fps);
  const analyzer = analyzers.get(request.stream);
  if (!analyzer) return;
  if (request.type === 'close') return void close(request.stream, analyzer);
  if (request.type === 'budget') return effort.setOverBudget(request.stream, request.over);
  if (failed.has(request.stream)) return;
  try {
    // The newest frame wins: one waiting at most, the one it replaces counted as dropped.
    analyzer.offer(request);
  } catch (error) {
    failed.add(request.stream);
    port.post({ type: 'failed', stream: request.stream, error: (error as Error).message });
  }
});

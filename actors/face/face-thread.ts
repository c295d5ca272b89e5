// The body of the face thread: the face analysis of every stream of the host (detection,
// tracking, expressions, per-second rows), with the detector and classifiers batched across
// streams. onnxruntime-node runs inference on the calling thread, and a batch of frames takes
// tens of milliseconds: here it never holds up the event loop that reads ffmpeg's pipes.
import { getPriority, setPriority } from 'node:os';
import { performance } from 'node:perf_hooks';
import { workerData } from 'node:worker_threads';
import type { FaceSecond, VideoSecond } from '../../bus/contracts/rows.ts';
import { loadAnalysisModels } from './analysis-models.ts';
import { threadPort } from '../models/stream-thread-body.ts';
import { FaceAnalyzer } from './analyzer.ts';
import { FaceEffort } from './face-effort.ts';

export interface FaceThreadData {
  modelsDir: string;
  /** FACE_EFFORT_CALM_SECONDS, in ms (FaceEffort). */
  effortCalmMs: number;
}

export type FaceRequest =
  | { type: 'open'; stream: number; session: string; fps: number }
  | { type: 'frame'; stream: number; rgb: Uint8Array; width: number; height: number; second: number };

export type FaceReply = { type: 'face'; stream: number; row: FaceSecond } | { type: 'video'; stream: number; row: VideoSecond };

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
const EFFORT_REVIEW_MS = 1000;
let loopBefore = performance.eventLoopUtilization();
setInterval(() => {
  const loopNow = performance.eventLoopUtilization();
  // The share of the last second this thread was not waiting for work: analysing, or ready to
  // and waiting for a core.
  const busyShare = performance.eventLoopUtilization(loopNow, loopBefore).utilization;
  loopBefore = loopNow;
  if (effort.review(busyShare)) port.post({ type: 'effort', level: effort.level, effort: { ...effort.current } });
}, EFFORT_REVIEW_MS).unref();
const analyzers = new Map<number, FaceAnalyzer>();
const failed = new Set<number>();

function open(id: number, session: string, fps: number): void {
  analyzers.set(
    id,
    new FaceAnalyzer({
      session,
      models,
      fps,
      effort,
      onFaceSecond: (row) => port.post({ type: 'face', stream: id, row }),
      onVideoSecond: (row) => port.post({ type: 'video', stream: id, row }),
    }),
  );
}

async function close(id: number, analyzer: FaceAnalyzer): Promise<void> {
  analyzers.delete(id);
  failed.delete(id);
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
  if (failed.has(request.stream)) return;
  try {
    // The newest frame wins: one waiting at most, the one it replaces counted as dropped.
    analyzer.offer(request);
  } catch (error) {
    failed.add(request.stream);
    port.post({ type: 'failed', stream: request.stream, error: (error as Error).message });
  }
});

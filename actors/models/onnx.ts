// One InferenceSession per model file per thread, shared by every session of the host.
// Thread counts are fixed on purpose: one model call must not grab every core. onnxruntime-node
// runs inference on the calling thread, so the host spreads work over threads itself: face
// and voice models on the main thread (a few ms per call), transcription on its own thread.
import { join } from 'node:path';
import ort from 'onnxruntime-node';
import { config } from '../../bus/config.ts';

const loaded = new Map<string, Promise<ort.InferenceSession>>();

export function loadModel(file: string, dir: string = config.modelsDir): Promise<ort.InferenceSession> {
  const path = join(dir, file);
  let session = loaded.get(path);
  if (!session) {
    session = ort.InferenceSession.create(path, {
      intraOpNumThreads: 1,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      graphOptimizationLevel: 'all',
      logSeverityLevel: 3,
    });
    loaded.set(path, session);
    session.catch(() => loaded.delete(path));
  }
  return session;
}

export { ort };

// One InferenceSession per model file per host, shared by every session the host runs.
// Thread counts are fixed on purpose: a host runs many streams on few cores, so one model
// call must not grab every core (the parallelism comes from the streams, not the kernels).
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

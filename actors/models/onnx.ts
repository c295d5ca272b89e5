// Opens one model file as an InferenceSession. The host opens each model once and shares the
// session among its analysers. Thread counts are fixed on purpose: one model call must not
// grab every core. onnxruntime-node runs inference on the calling thread, so the host spreads
// work over threads itself: one for face analysis, one for voice analysis, and a pool for
// transcription.
import ort from 'onnxruntime-node';

export function loadModel(path: string): Promise<ort.InferenceSession> {
  return ort.InferenceSession.create(path, {
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
    logSeverityLevel: 3,
  });
}

export { ort };

// Opens one model file as an InferenceSession. The host opens each model once and shares the
// session among its analysers. Thread counts are fixed on purpose: one model call must not
// grab every core. onnxruntime-node runs inference on the calling thread, so the host spreads
// work over threads itself: one for face analysis, one for voice analysis, and a pool for
// transcription.
//
// Constant folding normally stops at DequantizeLinear, to leave quantized weights to the QDQ
// fusions, and none applies to Moonshine's decoder output matrix (32768 tokens), so it was
// dequantized again on every step. `session.disable_quant_qdq` lets those weights be
// dequantized once, at load: the same results (logits within 2e-5) for 30 % less decoder time
// and about 38 MB more per model.
import ort from 'onnxruntime-node';

/** `model` is a file's path or a model's bytes. */
export function loadModel(model: string | Uint8Array): Promise<ort.InferenceSession> {
  const options: ort.InferenceSession.SessionOptions = {
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
    logSeverityLevel: 3,
    extra: { session: { disable_quant_qdq: '1' } },
  };
  // Two calls because the runtime's overloads take a path or bytes, not either.
  return typeof model === 'string' ? ort.InferenceSession.create(model, options) : ort.InferenceSession.create(model, options);
}

export { ort };

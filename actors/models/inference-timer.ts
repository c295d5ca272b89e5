// Timing of model calls for the host's metrics (emo_inference_duration_seconds). Optional
// wherever a model is called: a test or a benchmark builds a model without one.
export type ModelName = 'face_detector' | 'expressions' | 'voice_activity' | 'speech';

/** Starts timing one call of `model`; calling what it returns ends it. */
export type InferenceTimer = (model: ModelName) => () => void;

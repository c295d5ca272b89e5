// The models a host's sessions share, opened once at start: a missing or broken file stops
// the host there rather than a session mid-stream. Transcription loads its own on its thread.
import { join } from 'node:path';
import { ExpressionClassifier } from '../face/expressions.ts';
import { FaceDetector } from '../face/yunet.ts';
import { MODEL_FILES } from './files.ts';
import type { InferenceTimer } from './inference-timer.ts';
import { loadModel, type ort } from './onnx.ts';

export interface FaceModels {
  detector: FaceDetector;
  classifier: ExpressionClassifier;
}

export interface AnalysisModels {
  faces: FaceModels;
  /** Silero VAD: one session shared; each stream keeps its own recurrent state. */
  voiceActivity: ort.InferenceSession;
}

/** `timer`: times the face models' calls (the VAD's are timed by each stream's detector). */
export async function loadAnalysisModels(modelsDir: string, timer?: InferenceTimer): Promise<AnalysisModels> {
  const load = (file: string) => loadModel(join(modelsDir, file));
  const [detector, expressions, voiceActivity] = await Promise.all([
    load(MODEL_FILES.faceDetector),
    load(MODEL_FILES.expressions),
    load(MODEL_FILES.voiceActivity),
  ]);
  return {
    faces: { detector: new FaceDetector(detector, timer), classifier: new ExpressionClassifier(expressions, timer) },
    voiceActivity,
  };
}

// The face models a host's sessions share, opened once at start: a missing or broken file
// stops the host there rather than a session mid-stream. Voice activity and transcription load
// theirs on their own threads.
import { join } from 'node:path';
import { ExpressionClassifier } from './expressions.ts';
import { FaceDetector } from './yunet.ts';
import { MODEL_FILES } from '../models/files.ts';
import type { InferenceTimer } from '../models/inference-timer.ts';
import { loadModel } from '../models/onnx.ts';

export interface FaceModels {
  detector: FaceDetector;
  classifier: ExpressionClassifier;
}

export interface AnalysisModels {
  faces: FaceModels;
}

/** `timer`: times the models' calls. */
export async function loadAnalysisModels(modelsDir: string, timer?: InferenceTimer): Promise<AnalysisModels> {
  const load = (file: string) => loadModel(join(modelsDir, file));
  const [detector, classifier] = await Promise.all([load(MODEL_FILES.faceDetector), load(MODEL_FILES.expressions)]);
  return { faces: { detector: new FaceDetector(detector, timer), classifier: new ExpressionClassifier(classifier, timer) } };
}

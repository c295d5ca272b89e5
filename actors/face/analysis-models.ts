// The face models a host's sessions share, opened once at start: a missing or broken file
// stops the host there rather than a session mid-stream. Voice activity and transcription load
// theirs on their own threads.
import { join } from 'node:path';
import type { ExpressionSettings } from './expression-settings.ts';
import { ExpressionClassifier, MINI_XCEPTION_EXPRESSIONS } from './expressions.ts';
import { FaceDetector } from './yunet.ts';
import { MODEL_FILES } from '../models/files.ts';
import type { InferenceTimer } from '../models/inference-timer.ts';
import { loadModel } from '../models/onnx.ts';

export interface FaceModels {
  detector: FaceDetector;
  classifier: ExpressionClassifier;
  /** The second expression classifier (mini-Xception), loaded when `expressions.ensemble` is on. */
  secondClassifier?: ExpressionClassifier;
  /** How the host measures expressions with them (EXPRESSION_* settings). */
  expressions: ExpressionSettings;
}

export interface AnalysisModels {
  faces: FaceModels;
}

/** `expressions`: how expressions are measured (expressionSettingsOf(config)); `timer`: times the models' calls. */
export async function loadAnalysisModels(
  modelsDir: string,
  expressions: ExpressionSettings,
  timer?: InferenceTimer,
): Promise<AnalysisModels> {
  const load = (file: string) => loadModel(join(modelsDir, file));
  const [detector, classifier, secondClassifier] = await Promise.all([
    load(MODEL_FILES.faceDetector),
    load(MODEL_FILES.expressions),
    expressions.ensemble ? load(MODEL_FILES.expressionsSecond) : undefined,
  ]);
  return {
    faces: {
      detector: new FaceDetector(detector, timer, expressions.detectionWidth ?? 0),
      classifier: new ExpressionClassifier(classifier, timer),
      ...(secondClassifier ? { secondClassifier: new ExpressionClassifier(secondClassifier, timer, MINI_XCEPTION_EXPRESSIONS) } : {}),
      expressions: { ...expressions },
    },
  };
}

// How the host measures expressions and how much work a face may cost, as configured (the
// EXPRESSION_* and FACE_* variables): read by the host, the face thread and the models alike.
import type { Effort } from './face-effort.ts';

export interface ExpressionSettings {
  /** Crops placed by the eyes (rotation and scale normalised) rather than around the box. */
  align: boolean;
  /** Classify the mirrored crop too (same call) and average. */
  flip: boolean;
  /** Average the second classifier's probabilities with the first's. */
  ensemble: boolean;
  /** Per track, the mean of the last this many frames' probabilities; 1 is none. */
  smoothingFrames: number;
  // The two costs of a face besides its crops, set with these (absent: today's full work).
  /** YuNet reads frames scaled down to at most this width; 0 or absent: at their own size. */
  detectionWidth?: number;
  /** Per track, the classifier runs on every this many frames and its answer is held between (ClassifyCadence); 1 or absent: every frame. */
  classifyEvery?: number;
  /** The lighter work per frame the face thread steps down to, in order, before it drops frames (FaceEffort); absent: none. */
  reduced?: Effort[];
}

/** The settings as read by readConfig(). */
export function expressionSettingsOf(config: {
  expressionAlign: boolean;
  expressionFlip: boolean;
  expressionEnsemble: boolean;
  expressionSmoothingFrames: number;
  faceDetectionWidth: number;
  expressionClassifyEvery: number;
  faceReducedDetectionWidth: number;
  faceReducedClassifyEvery: number;
  faceLeastDetectionWidth: number;
  faceLeastClassifyEvery: number;
}): ExpressionSettings {
  return {
    align: config.expressionAlign,
    flip: config.expressionFlip,
    ensemble: config.expressionEnsemble,
    smoothingFrames: config.expressionSmoothingFrames,
    detectionWidth: config.faceDetectionWidth,
    classifyEvery: config.expressionClassifyEvery,
    reduced: [
      { detectionWidth: config.faceReducedDetectionWidth, classifyEvery: config.faceReducedClassifyEvery },
      { detectionWidth: config.faceLeastDetectionWidth, classifyEvery: config.faceLeastClassifyEvery },
    ],
  };
}

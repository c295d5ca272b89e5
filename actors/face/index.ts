// Face analysis as code outside the service uses it (the lab in ops/bench): detection,
// tracking and expressions on frames of its own, and the crops and classes they rest on. The
// files behind it may move; what is named here stays.
export { loadAnalysisModels, type FaceModels } from './analysis-models.ts';
export { FaceAnalyzer } from './analyzer.ts';
export { FaceDetector, decodeYunet, paddedSize, toYunetInput } from './yunet.ts';
export { detectionSize, toScaledYunetInput } from './detection-scale.ts';
export { CROP_SIDE, CROP_VALUES, checkSide, cropFace, cropValues } from './crop.ts';
export { CLASS_COUNT, ExpressionClassifier, type ExpressionModelSpec } from './expressions.ts';
export { ExpressionReader, type ExpressionReading, type RgbFrame } from './expression-reader.ts';
export { EMOTION_OF_CLASS, EXPRESSION_CLASSES, type ExpressionClass } from './emotions.ts';
export { FACE_EFFORT_LADDER, type Effort } from './face-effort.ts';
export type { Face } from './face.ts';

// The ways of reading expressions the benchmarks compare with the service's (box crop, face-api's
// net: actors/face/expression-reader.ts). Each was measured and left out of the service
// (ops/bench/README-expressions.md, "Defaults, and why"); they live here so that the comparison
// can be run again:
// - align: the crop is placed by the eyes (cropAligned) instead of around the box;
// - flip: each crop's mirror image is classified too, in the same model call, and the two averaged;
// - ensemble: the second classifier (Human's mini-Xception, 64x64) classifies the same faces, in
//   its own call, and its probabilities are averaged with face-api's, class by class;
// - smoothing: per track, the mean of the last this many frames' probabilities;
// - detectionWidth, classifyEvery: a step of the face effort (FACE_EFFORT_LADDER) held throughout.
import { join } from 'node:path';
import {
  CLASS_COUNT,
  cropFace,
  cropValues,
  type Effort,
  ExpressionClassifier,
  type ExpressionModelSpec,
  type ExpressionReading,
  type Face,
  type FaceModels,
  type RgbFrame,
} from '../../../actors/face/index.ts';
import { loadModel } from '../../../actors/models/index.ts';
import { LAB_MODEL_FILES } from '../assets/models.ts';
import { alignedGeometry, cropAligned, mirrorCrop } from './aligned-crop.ts';
import { TrackSmoother } from './track-smoother.ts';

export interface ExpressionVariant {
  /** Crops placed by the eyes (rotation and scale normalised) rather than around the box. */
  align: boolean;
  /** Classify the mirrored crop too (same call) and average. */
  flip: boolean;
  /** Average the second classifier's probabilities with the first's. */
  ensemble: boolean;
  /** Per track, the mean of the last this many frames' probabilities; 1 is none. */
  smoothingFrames: number;
  /** YuNet reads frames scaled down to at most this width; 0 or absent: at their own size. */
  detectionWidth?: number;
  /** Per track, the classifier runs on every this many frames (ClassifyCadence); 1 or absent: every frame. */
  classifyEvery?: number;
}

/** What the service does. */
export const SERVICE_VARIANT: ExpressionVariant = { align: false, flip: false, ensemble: false, smoothingFrames: 1 };

/** The variant's effort, held for the analyzer (which never steps it). */
export function heldEffort(variant: ExpressionVariant): { current: Effort; offered(): void } {
  return { current: { detectionWidth: variant.detectionWidth ?? 0, classifyEvery: variant.classifyEvery ?? 1 }, offered: () => {} };
}

/**
 * Human's mini-Xception (oarriaga, trained on FER2013): angry, disgust, fear, happy, sad,
 * surprise, neutral.
 */
export const MINI_XCEPTION_EXPRESSIONS: ExpressionModelSpec = {
  side: 64,
  classes: ['angry', 'disgusted', 'fearful', 'happy', 'sad', 'surprised', 'neutral'],
};
/**
 * FER2013's faces are cropped tighter than face-api's: a crop 0.85 of face-api's side (eyebrows
 * to chin) suits it best of 0.65-1.3 tried on the evaluation set (0.8 and 0.9 did about as well).
 */
export const MINI_XCEPTION_ZOOM = 0.85;

export async function loadSecondClassifier(modelsDir: string): Promise<ExpressionClassifier> {
  return new ExpressionClassifier(await loadModel(join(modelsDir, LAB_MODEL_FILES.expressionsSecond)), undefined, MINI_XCEPTION_EXPRESSIONS);
}

/** A classifier and the side of its crop relative to face-api's framing (1: the same part of the face). */
export interface FramedClassifier {
  classifier: ExpressionClassifier;
  zoom: number;
}

/** One analyser's expression reading by `variant`: its own crop buffers and smoothing, the shared classifiers. */
export class VariantReader implements ExpressionReading {
  private readonly models: (FramedClassifier & { crops: Float32Array })[];
  private readonly views: number;
  private readonly smoother: TrackSmoother;

  constructor(
    private readonly variant: ExpressionVariant,
    /** The first classifier and, for the ensemble, the second. */
    classifiers: FramedClassifier[],
    /** Frames a track may go unseen before its smoothing history is dropped (the tracker's memory). */
    forgetAfterFrames: number,
  ) {
    if (variant.ensemble !== (classifiers.length === 2)) throw new Error('the ensemble takes two classifiers, anything else one');
    this.views = variant.flip ? 2 : 1;
    this.models = classifiers.map((model) => ({ ...model, crops: new Float32Array(0) }));
    this.smoother = new TrackSmoother(variant.smoothingFrames, forgetAfterFrames);
  }

  /** With the service's classifier first (face-api's, zoom 1) and, for the ensemble, the mini-Xception. */
  static of(variant: ExpressionVariant, models: FaceModels, second: ExpressionClassifier | undefined, forgetAfterFrames: number): VariantReader {
    const classifiers = [{ classifier: models.classifier, zoom: 1 }];
    if (variant.ensemble) {
      if (!second) throw new Error('the ensemble is on but the second classifier is not loaded');
      classifiers.push({ classifier: second, zoom: MINI_XCEPTION_ZOOM });
    }
    return new VariantReader(variant, classifiers, forgetAfterFrames);
  }

  async read(frame: RgbFrame, faces: readonly Face[], tracks: readonly number[]): Promise<Float32Array> {
    const count = faces.length;
    if (count === 0) return this.smoother.smooth(tracks, new Float32Array(0));
    const crops = count * this.views;
    for (const model of this.models) {
      const { side } = model.classifier.spec;
      const values = cropValues(side);
      if (model.crops.length < crops * values) model.crops = new Float32Array(crops * values);
      faces.forEach((face, i) => {
        const slot = i * this.views;
        if (this.variant.align) cropAligned(frame.rgb, frame.width, frame.height, alignedGeometry(face.landmarks, model.zoom), model.crops, slot, side);
        else cropFace(frame.rgb, frame.width, frame.height, zoomed(face, model.zoom), model.crops, slot, side);
        if (this.views === 2) mirrorCrop(model.crops, slot, slot + 1, side);
      });
    }
    const answers = await Promise.all(this.models.map((model) => model.classifier.classifyExpressions(model.crops, crops)));
    return this.smoother.smooth(tracks, answers.length === 1 && this.views === 1 ? answers[0]! : this.mean(answers, count));
  }

  /** Mean over every view of every model: each model weighs the same, each view within it too. */
  private mean(answers: Float32Array[], count: number): Float32Array {
    const out = new Float32Array(count * CLASS_COUNT);
    const weight = 1 / (answers.length * this.views);
    for (const answer of answers) {
      for (let face = 0; face < count; face++) {
        for (let view = 0; view < this.views; view++) {
          const from = (face * this.views + view) * CLASS_COUNT;
          for (let c = 0; c < CLASS_COUNT; c++) out[face * CLASS_COUNT + c]! += answer[from + c]! * weight;
        }
      }
    }
    return out;
  }
}

function zoomed(face: Face, zoom: number): Face {
  if (zoom === 1) return face;
  const width = face.width * zoom;
  const height = face.height * zoom;
  return { ...face, x: face.x + (face.width - width) / 2, y: face.y + (face.height - height) / 2, width, height };
}

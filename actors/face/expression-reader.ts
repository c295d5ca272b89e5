// How a face's expression is measured in one frame, from the detection to class probabilities,
// by the settings the host runs with (EXPRESSION_* in docs/configuration.md):
// - align: the crop is placed by the eyes (cropAligned: level eyes, side from the eye
//   distance) instead of around the box (cropFace);
// - flip: each crop's mirror image is classified too, in the same model call, and the two
//   averaged;
// - ensemble: the second classifier (Human's mini-Xception, 64x64) classifies the same faces,
//   in its own call, and its probabilities are averaged with face-api's, class by class.
// Per-track smoothing across frames is the analyzer's (TrackSmoother), it needs the tracks.
import type { FaceModels } from './analysis-models.ts';
import { alignedGeometry, cropAligned, cropFace, cropValues, mirrorCrop } from './crop.ts';
import { CLASS_COUNT, type ExpressionClassifier } from './expressions.ts';
import type { Face } from './face.ts';

export interface RgbFrame {
  rgb: Uint8Array;
  width: number;
  height: number;
}

/** One analyser's expression measurement: its own crop buffers, the host's shared classifiers. */
export class ExpressionReader {
  private readonly models: { classifier: ExpressionClassifier; crops: Float32Array }[];
  private readonly align: boolean;
  private readonly views: number;

  constructor(faceModels: FaceModels) {
    const { expressions: settings } = faceModels;
    if (settings.ensemble && !faceModels.secondClassifier) throw new Error('the ensemble is on but the second classifier is not loaded');
    this.align = settings.align;
    this.views = settings.flip ? 2 : 1;
    this.models = [{ classifier: faceModels.classifier, crops: new Float32Array(0) }];
    if (settings.ensemble) this.models.push({ classifier: faceModels.secondClassifier!, crops: new Float32Array(0) });
  }

  /**
   * Class probabilities of each face, `faces.length` rows of CLASS_COUNT in EXPRESSION_CLASSES
   * order. The frame is read before this returns its promise.
   */
  async read(frame: RgbFrame, faces: readonly Face[]): Promise<Float32Array> {
    const count = faces.length;
    if (count === 0) return new Float32Array(0);
    const crops = count * this.views;
    for (const model of this.models) {
      const { side, zoom } = model.classifier.spec;
      const values = cropValues(side);
      if (model.crops.length < crops * values) model.crops = new Float32Array(crops * values);
      faces.forEach((face, i) => {
        const slot = i * this.views;
        if (this.align) cropAligned(frame.rgb, frame.width, frame.height, alignedGeometry(face.landmarks, zoom), model.crops, slot, side);
        else cropFace(frame.rgb, frame.width, frame.height, zoomed(face, zoom), model.crops, slot, side);
        if (this.views === 2) mirrorCrop(model.crops, slot, slot + 1, side);
      });
    }
    const answers = await Promise.all(this.models.map((model) => model.classifier.classifyExpressions(model.crops, crops)));
    if (answers.length === 1 && this.views === 1) return answers[0]!;
    // Mean over every view of every model: each model weighs the same, each view within it too.
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

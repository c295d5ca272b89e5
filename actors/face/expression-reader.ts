// How a face's expression is measured in one frame, from the detection to class probabilities:
// the square around the box, classified by face-api's net. Alignment by the eyes, mirrored
// crops, a second classifier and per-track smoothing were measured against it and left out
// (ops/bench/README-expressions.md); the benchmarks bring them as readers of their own.
import type { FaceModels } from './analysis-models.ts';
import { cropFace, cropValues } from './crop.ts';
import type { ExpressionClassifier } from './expressions.ts';
import type { Face } from './face.ts';
import type { WorkMeter } from './yunet.ts';

export interface RgbFrame {
  rgb: Uint8Array;
  width: number;
  height: number;
}

/** What the analyzer asks of a reader; the benchmarks' variants take the same place. */
export interface ExpressionReading {
  /**
   * Class probabilities of each face, `faces.length` rows of CLASS_COUNT in EXPRESSION_CLASSES
   * order; `tracks[i]` is the track of `faces[i]`. The frame is read before this returns its promise.
   */
  read(frame: RgbFrame, faces: readonly Face[], tracks: readonly number[]): Promise<Float32Array>;
}

/** One analyser's expression measurement: its own crop buffer, the host's shared classifier. */
export class ExpressionReader implements ExpressionReading {
  private readonly classifier: ExpressionClassifier;
  private crops = new Float32Array(0);

  constructor(
    faceModels: FaceModels,
    /** Hears the thread's work on this reader's faces: cropping, and their share of the classifier's calls. */
    private readonly spent?: WorkMeter,
  ) {
    this.classifier = faceModels.classifier;
  }

  read(frame: RgbFrame, faces: readonly Face[]): Promise<Float32Array> {
    const count = faces.length;
    if (count === 0) return Promise.resolve(new Float32Array(0));
    const { side } = this.classifier.spec;
    const values = cropValues(side);
    if (this.crops.length < count * values) this.crops = new Float32Array(count * values);
    const started = performance.now();
    faces.forEach((face, slot) => cropFace(frame.rgb, frame.width, frame.height, face, this.crops, slot, side));
    this.spent?.((performance.now() - started) / 1000);
    return this.classifier.classifyExpressions(this.crops, count, this.spent);
  }
}

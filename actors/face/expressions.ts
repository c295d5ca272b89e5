// Facial expression classification. The faces waiting from all the host's sessions are
// classified together in one inference call (see Batcher). The service's model is face-api's
// expression net (112x112 RGB); another model of this shape (the benchmarks' mini-Xception) is
// described by its spec, and every model answers in EXPRESSION_CLASSES order whatever its own.
import { Batcher, concat } from '../models/batcher.ts';
import type { InferenceTimer } from '../models/inference-timer.ts';
import { ort } from '../models/onnx.ts';
import { CROP_SIDE, cropValues } from './crop.ts';
import { EXPRESSION_CLASSES, type ExpressionClass } from './emotions.ts';
import type { WorkMeter } from './yunet.ts';

export const CLASS_COUNT = EXPRESSION_CLASSES.length;
const MAX_FACES_PER_CALL = 64;

/** What a model takes and how its outputs map to EXPRESSION_CLASSES. */
export interface ExpressionModelSpec {
  /** Side of the square RGB crop it takes. */
  side: number;
  /** The model's class order, named as in EXPRESSION_CLASSES. */
  classes: readonly ExpressionClass[];
}

/** face-api.js FaceExpressionNet (faceapi_expression_112.onnx). */
const FACE_API_EXPRESSIONS: ExpressionModelSpec = { side: CROP_SIDE, classes: EXPRESSION_CLASSES };

interface Crops {
  crops: Float32Array;
  count: number;
  spent?: WorkMeter;
}

/** An expression classifier over every session of a host: waiting faces are classified together. */
export class ExpressionClassifier {
  private readonly batcher: Batcher<Crops, Float32Array>;
  private readonly values: number;
  /** For each EXPRESSION_CLASSES entry, its column in the model's output. */
  private readonly columns: number[];

  constructor(
    private readonly model: ort.InferenceSession,
    private readonly timer?: InferenceTimer,
    readonly spec: ExpressionModelSpec = FACE_API_EXPRESSIONS,
  ) {
    if (spec.classes.length !== CLASS_COUNT || EXPRESSION_CLASSES.some((cls) => !spec.classes.includes(cls))) {
      throw new Error(`a model's classes must be ${EXPRESSION_CLASSES.join(', ')} in some order`);
    }
    this.values = cropValues(spec.side);
    this.columns = EXPRESSION_CLASSES.map((cls) => spec.classes.indexOf(cls));
    this.batcher = new Batcher<Crops, Float32Array>(
      (group) => this.classify(group),
      (group, next) => group.reduce((faces, g) => faces + g.count, next.count) <= MAX_FACES_PER_CALL,
    );
  }

  /** How the work was grouped: inference calls made and requests they carried, since start. */
  get stats() {
    return this.batcher.stats;
  }

  /**
   * Classifies the first `count` crops of `batch` (as filled by cropFace at the model's
   * side). Returns the class probabilities, `count` rows of CLASS_COUNT values in
   * EXPRESSION_CLASSES order. `batch` must stay untouched until the promise settles. `spent`:
   * hears these faces' share of the model call (by their count among the call's faces).
   */
  classifyExpressions(batch: Float32Array, count: number, spent?: WorkMeter): Promise<Float32Array> {
    if (count === 0) return Promise.resolve(new Float32Array(0));
    if (batch.length < count * this.values) return Promise.reject(new Error(`batch holds fewer than ${count} crops`));
    return this.batcher.submit({ crops: batch.subarray(0, count * this.values), count, spent });
  }

  private async classify(group: Crops[]): Promise<Float32Array[]> {
    const faces = group.reduce((sum, g) => sum + g.count, 0);
    const input = group.length === 1 ? group[0]!.crops : concat(group.map((g) => g.crops), faces * this.values);
    const { side } = this.spec;
    const done = this.timer?.('expressions');
    const started = performance.now();
    const { probs } = await this.model.run({ input: new ort.Tensor('float32', input, [faces, 3, side, side]) }, ['probs']);
    const perFace = (performance.now() - started) / 1000 / faces;
    done?.();
    for (const { count, spent } of group) spent?.(perFace * count);
    if (!probs) throw new Error('expression model returned no probs');
    const all = probs.data as Float32Array;
    let offset = 0;
    return group.map(({ count }) => {
      const rows = new Float32Array(count * CLASS_COUNT);
      for (let face = 0; face < count; face++) {
        const from = (offset + face) * CLASS_COUNT;
        for (let c = 0; c < CLASS_COUNT; c++) rows[face * CLASS_COUNT + c] = all[from + this.columns[c]!]!;
      }
      offset += count;
      return rows;
    });
  }
}

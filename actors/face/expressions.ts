// Facial expression classification. The faces waiting from all the host's sessions are
// classified together in one inference call (see Batcher).
import { Batcher, concat } from '../models/batcher.ts';
import type { InferenceTimer } from '../models/inference-timer.ts';
import { ort } from '../models/onnx.ts';
import { CROP_SIDE, CROP_VALUES } from './crop.ts';
import { EXPRESSION_CLASSES } from './emotions.ts';

export const CLASS_COUNT = EXPRESSION_CLASSES.length;
const MAX_FACES_PER_CALL = 64;

interface Crops {
  crops: Float32Array;
  count: number;
}

/** The expression classifier over every session of a host: waiting faces are classified together. */
export class ExpressionClassifier {
  private readonly batcher: Batcher<Crops, Float32Array>;

  constructor(
    private readonly model: ort.InferenceSession,
    private readonly timer?: InferenceTimer,
  ) {
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
   * Classifies the first `count` crops of `batch` (as filled by cropFace). Returns the class
   * probabilities, `count` rows of CLASS_COUNT values in EXPRESSION_CLASSES order. `batch` must
   * stay untouched until the promise settles.
   */
  classifyExpressions(batch: Float32Array, count: number): Promise<Float32Array> {
    if (count === 0) return Promise.resolve(new Float32Array(0));
    if (batch.length < count * CROP_VALUES) return Promise.reject(new Error(`batch holds fewer than ${count} crops`));
    return this.batcher.submit({ crops: batch.subarray(0, count * CROP_VALUES), count });
  }

  private async classify(group: Crops[]): Promise<Float32Array[]> {
    const faces = group.reduce((sum, g) => sum + g.count, 0);
    const input = group.length === 1 ? group[0]!.crops : concat(group.map((g) => g.crops), faces * CROP_VALUES);
    const done = this.timer?.('expressions');
    const { probs } = await this.model.run({ input: new ort.Tensor('float32', input, [faces, 3, CROP_SIDE, CROP_SIDE]) }, ['probs']);
    done?.();
    if (!probs) throw new Error('expression model returned no probs');
    const all = probs.data as Float32Array;
    let offset = 0;
    return group.map(({ count }) => {
      const rows = all.slice(offset * CLASS_COUNT, (offset + count) * CLASS_COUNT);
      offset += count;
      return rows;
    });
  }
}

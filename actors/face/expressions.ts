// Facial expression classification: every face of a frame in one inference call.
import { loadModel, ort } from '../models/onnx.ts';
import { MODEL_FILES } from '../models/files.ts';
import { CROP_SIDE, CROP_VALUES } from './crop.ts';
import { EXPRESSION_CLASSES } from './emotions.ts';

export const CLASS_COUNT = EXPRESSION_CLASSES.length;

/**
 * Classifies the first `count` crops of `batch` (as filled by cropFace). Returns the class
 * probabilities, `count` rows of CLASS_COUNT values in EXPRESSION_CLASSES order.
 */
export async function classifyExpressions(batch: Float32Array, count: number): Promise<Float32Array> {
  if (count === 0) return new Float32Array(0);
  if (batch.length < count * CROP_VALUES) throw new Error(`batch holds fewer than ${count} crops`);
  const model = await loadModel(MODEL_FILES.expressions);
  const input = new ort.Tensor('float32', batch.subarray(0, count * CROP_VALUES), [count, 3, CROP_SIDE, CROP_SIDE]);
  const { probs } = await model.run({ input }, ['probs']);
  if (!probs) throw new Error('expression model returned no probs');
  return probs.data as Float32Array;
}

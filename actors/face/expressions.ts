// Facial expression classification, batched across every session of the host: requests that
// arrive while an inference runs are classified together in the next one. An idle host runs
// a request at once; a busy one makes fewer, larger calls instead of queueing many small ones.
import { loadModel, ort } from '../models/onnx.ts';
import { MODEL_FILES } from '../models/files.ts';
import { CROP_SIDE, CROP_VALUES } from './crop.ts';
import { EXPRESSION_CLASSES } from './emotions.ts';

export const CLASS_COUNT = EXPRESSION_CLASSES.length;
const MAX_FACES_PER_CALL = 64;

interface Request {
  crops: Float32Array;
  count: number;
  resolve(probabilities: Float32Array): void;
  reject(error: unknown): void;
}

const waiting: Request[] = [];
let running = false;

/** How the work was grouped: inference calls made and faces classified, since start. */
export const expressionCalls = { calls: 0, faces: 0 };

/**
 * Classifies the first `count` crops of `batch` (as filled by cropFace). Returns the class
 * probabilities, `count` rows of CLASS_COUNT values in EXPRESSION_CLASSES order. `batch` must
 * stay untouched until the promise settles.
 */
export function classifyExpressions(batch: Float32Array, count: number): Promise<Float32Array> {
  if (count === 0) return Promise.resolve(new Float32Array(0));
  if (batch.length < count * CROP_VALUES) return Promise.reject(new Error(`batch holds fewer than ${count} crops`));
  return new Promise((resolve, reject) => {
    waiting.push({ crops: batch.subarray(0, count * CROP_VALUES), count, resolve, reject });
    pump();
  });
}

function pump(): void {
  if (running || !waiting.length) return;
  running = true;
  const group: Request[] = [];
  let faces = 0;
  while (waiting.length && (group.length === 0 || faces + (waiting[0] as Request).count <= MAX_FACES_PER_CALL)) {
    const request = waiting.shift() as Request;
    group.push(request);
    faces += request.count;
  }
  classify(group, faces).finally(() => {
    running = false;
    pump();
  });
}

async function classify(group: Request[], faces: number): Promise<void> {
  try {
    const input = group.length === 1 ? (group[0] as Request).crops : concat(group, faces);
    const model = await loadModel(MODEL_FILES.expressions);
    const tensor = new ort.Tensor('float32', input, [faces, 3, CROP_SIDE, CROP_SIDE]);
    const { probs } = await model.run({ input: tensor }, ['probs']);
    if (!probs) throw new Error('expression model returned no probs');
    expressionCalls.calls++;
    expressionCalls.faces += faces;
    const all = probs.data as Float32Array;
    let offset = 0;
    for (const request of group) {
      request.resolve(all.slice(offset * CLASS_COUNT, (offset + request.count) * CLASS_COUNT));
      offset += request.count;
    }
  } catch (error) {
    for (const request of group) request.reject(error);
  }
}

function concat(group: Request[], faces: number): Float32Array {
  const input = new Float32Array(faces * CROP_VALUES);
  let offset = 0;
  for (const request of group) {
    input.set(request.crops, offset);
    offset += request.crops.length;
  }
  return input;
}

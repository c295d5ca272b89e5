// Each step of Moonshine's decoder attends over the audio with keys that its first step computes
// and the cache keeps. As published, the cache holds them [heads, frames, size], and every later
// step transposes them to [heads, size, frames] and scales them before its product with the
// query: two passes over every layer's keys for each token, the same result each time. This
// rewrite, done in memory as the model is loaded (like eight-bit-output-layer.ts), has the first
// step cache the keys as that product reads them, transposed and scaled, and the later steps read
// the cache as it is. The cached keys' shape becomes [batch, heads, size, frames]. The scale is
// one over the fourth root of the head size, the same at every step, so scaling once is exact.
//
// Measured on this machine: the same tokens, and 6 % less CPU for a whole transcript of the JFK
// sample (11 s), 3-5 % on sentences of 3-5 s (ops/bench/README-speech-noise.md).
import { messageField, readFields, writeFields, type Field } from '../models/protobuf.ts';
import {
  Graph,
  Shape,
  TensorType,
  TypeProto,
  ValueInfo,
  intsAttribute,
  hasSubgraphs,
  modelGraph,
  nodeParts,
  nodeWith,
  valueName,
  withParts,
  withSubgraphs,
  type NodeParts,
} from '../models/onnx-graph.ts';

const PAST_KEY = /^past_key_values\.\d+\.encoder\.key$/;
const PRESENT_KEY = /^present\.\d+\.encoder\.key$/;
/** [batch, heads, frames, size] to [batch, heads, size, frames], as the product with the query reads keys. */
const KEYS_AS_READ = [0, 1, 3, 2];
/** [batch, frames, heads, size] to [batch, heads, frames, size]: the keys as the published model caches them. */
const KEYS_AS_CACHED = [0, 2, 1, 3];
/** [batch, frames, heads, size] to [batch, heads, size, frames]. */
const KEYS_AS_READ_FROM_FRAMES = [0, 2, 3, 1];

interface Rewrites {
  /** Layers whose later steps now read the cached keys directly. */
  readers: number;
  /** Layers whose first step now caches the keys as read. */
  writers: number;
}

/**
 * The merged decoder with its cross-attention keys cached as the product with the query reads
 * them. Throws unless every layer's keys are both written and read that way, so a decoder of
 * another shape fails at load rather than attending over the wrong keys.
 */
export function withCrossAttentionKeysCachedAsRead(model: Uint8Array): Uint8Array {
  const { graph, withGraph } = modelGraph(readFields(model));
  const layers = graph.filter((field) => field.number === Graph.input && PAST_KEY.test(valueName(field))).length;
  const rewrites: Rewrites = { readers: 0, writers: 0 };
  const rewritten = rewriteGraph(graph, rewrites).map((field) =>
    (field.number === Graph.input || field.number === Graph.output) && isCachedKey(valueName(field)) ? withLastDimsSwapped(field) : field,
  );
  if (layers === 0 || rewrites.readers !== layers || rewrites.writers !== layers) {
    throw new Error(
      `the decoder's cross-attention keys are not cached as expected: ${layers} layers, ${rewrites.writers} written, ${rewrites.readers} read`,
    );
  }
  return writeFields(withGraph(rewritten));
}

function rewriteGraph(graph: Field[], rewrites: Rewrites): Field[] {
  const nodes = graph.filter((field) => field.number === Graph.node).map(nodeParts);
  const outputs = new Set(graph.filter((field) => field.number === Graph.output).map(valueName));
  const dropped = new Set<NodeParts>();
  const renamed = new Map<NodeParts, { inputs: string[]; outputs: string[] }>();
  const consumers = (name: string) => nodes.filter((node) => node.inputs.includes(name));
  /** The product with the query that reads `keys` through a scaling Mul, and that Mul. */
  const productThroughScale = (keys: string) => {
    const scale = consumers(keys);
    if (scale.length !== 1 || scale[0]!.opType !== 'Mul') return undefined;
    const products = consumers(scale[0]!.outputs[0]!);
    if (products.length !== 1 || products[0]!.opType !== 'MatMul' || products[0]!.inputs[1] !== scale[0]!.outputs[0]) return undefined;
    return { scale: scale[0]!, product: products[0]! };
  };

  for (const node of nodes) {
    if (node.opType !== 'Transpose') continue;
    const perm = intsAttribute(node, 'perm')?.join();
    // A later step: its product reads the cached keys directly.
    if (perm === KEYS_AS_READ.join() && PAST_KEY.test(node.inputs[0]!)) {
      const reader = productThroughScale(node.outputs[0]!);
      if (!reader) continue;
      dropped.add(node).add(reader.scale);
      renamed.set(reader.product, { inputs: [reader.product.inputs[0]!, node.inputs[0]!], outputs: reader.product.outputs });
      rewrites.readers++;
    }
    // The first step: it caches the keys its own product reads, not the keys before the transpose.
    if (perm === KEYS_AS_CACHED.join() && PRESENT_KEY.test(node.outputs[0]!) && outputs.has(node.outputs[0]!)) {
      const present = node.outputs[0]!;
      if (consumers(present).length > 0) continue;
      const asRead = consumers(node.inputs[0]!).find(
        (other) => other.opType === 'Transpose' && intsAttribute(other, 'perm')?.join() === KEYS_AS_READ_FROM_FRAMES.join(),
      );
      const reader = asRead && productThroughScale(asRead.outputs[0]!);
      if (!reader) continue;
      dropped.add(node);
      renamed.set(reader.scale, { inputs: reader.scale.inputs, outputs: [present] });
      renamed.set(reader.product, { inputs: [reader.product.inputs[0]!, present], outputs: reader.product.outputs });
      rewrites.writers++;
    }
  }

  let at = 0;
  return graph.flatMap((field) => {
    if (field.number !== Graph.node) return [field];
    const node = nodes[at++]!;
    if (dropped.has(node)) return [];
    const names = renamed.get(node);
    if (names) return [nodeWith(node, names.inputs, names.outputs)];
    return [hasSubgraphs(node) ? withSubgraphs(node, (subgraph) => rewriteGraph(subgraph, rewrites)) : field];
  });
}

function isCachedKey(name: string): boolean {
  return PAST_KEY.test(name) || PRESENT_KEY.test(name);
}

/** A value info of a 4-dimensional tensor with its last two dimensions swapped. */
function withLastDimsSwapped(field: Field): Field {
  return withParts(field, ValueInfo.type, (type) =>
    withParts(type, TypeProto.tensorType, (tensor) =>
      withParts(tensor, TensorType.shape, (shape) => {
        const dims = readFields(shape.value);
        if (dims.length !== 4 || dims.some((dim) => dim.number !== Shape.dim)) throw new Error('a cached key is not 4-dimensional');
        return messageField(TensorType.shape, [dims[0]!, dims[1]!, dims[3]!, dims[2]!]);
      }),
    ),
  );
}

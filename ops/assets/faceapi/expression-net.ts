// face-api's FaceExpressionNet as an ONNX graph. The network (face-api.js FaceFeatureExtractor
// plus a classifier):
//   x = (rgb - mean) / 255
//   four dense blocks; block k (k = 0..3), each on half the resolution of its input:
//     out1 = relu(conv0(x))              conv0: plain 3x3 conv in block 0, separable otherwise; stride 2
//     out2 = sep(out1)                   sep: depthwise 3x3 then pointwise 1x1 with bias; stride 1
//     out3 = sep(relu(out1 + out2))
//     out4 = sep(relu(out1 + (out2 + out3)))
//     x    = relu(out1 + (out2 + (out3 + out4)))
//   7x7 average pool (stride 2, valid) -> 256 features -> fully connected 256 -> 7 -> softmax.
// Sums keep TensorFlow.js's association so rounding follows the original. Padding is
// TensorFlow's 'same': for stride 2 on an even size the one extra row and column go after.
import type { Weight } from './weights.ts';
import type { OnnxInitializer, OnnxModel, OnnxNode } from './onnx-proto.ts';

export const INPUT_SIDE = 112;
export const CLASSES = ['neutral', 'happy', 'sad', 'angry', 'fearful', 'disgusted', 'surprised'];
// face-api's mean of its training faces, per RGB channel.
const MEAN_RGB = [122.782, 117.001, 104.298];
const BLOCKS = 4;
const CONVS_PER_BLOCK = 4;

export function buildExpressionNet(weights: ReadonlyMap<string, Weight>): Omit<OnnxModel, 'producer' | 'metadata'> {
  const graph = new GraphBuilder(weights);
  graph.constant('mean_rgb', [1, 3, 1, 1], Float32Array.from(MEAN_RGB));
  graph.constant('c255', [1], Float32Array.of(255));
  graph.node('Sub', ['input', 'mean_rgb'], 'centred');
  let x = graph.node('Div', ['centred', 'c255'], 'normalised');

  let side = INPUT_SIDE;
  for (let block = 0; block < BLOCKS; block++) {
    const prefix = `dense${block}`;
    const first = block === 0 ? graph.conv(x, `${prefix}/conv0`, 2, side) : graph.separable(x, `${prefix}/conv0`, 2, side);
    side /= 2;
    const out1 = graph.node('Relu', [first], `${prefix}_out1`);
    const outs = [out1];
    let next = out1;
    for (let conv = 1; conv < CONVS_PER_BLOCK; conv++) {
      outs.push(graph.separable(next, `${prefix}/conv${conv}`, 1, side));
      const name = conv === CONVS_PER_BLOCK - 1 ? `${prefix}_out` : `${prefix}_c${conv + 1}_in`;
      next = graph.node('Relu', [sumFromRight(graph, outs, `${prefix}_sum${conv}`)], name);
    }
    x = next;
  }

  const pooled = graph.node('AveragePool', [x], 'pooled', { kernel_shape: [7, 7], strides: [2, 2] });
  const features = graph.node('Flatten', [pooled], 'features', { axis: 1 });
  graph.weight('fc/weights', 'fc_w', (w) => w.values, (shape) => shape);
  graph.weight('fc/bias', 'fc_b', (w) => w.values, (shape) => shape);
  graph.node('Gemm', [features, 'fc_w', 'fc_b'], 'logits');
  graph.node('Softmax', ['logits'], 'probs', { axis: 1 });

  return {
    opset: 13,
    graphName: 'face_expression_net',
    nodes: graph.nodes,
    initializers: graph.initializers,
    inputs: [{ name: 'input', shape: ['N', 3, INPUT_SIDE, INPUT_SIDE] }],
    outputs: [
      { name: 'probs', shape: ['N', CLASSES.length] },
      { name: 'logits', shape: ['N', CLASSES.length] },
    ],
  };
}

/** a + (b + (c + ...)), the order TensorFlow.js sums a dense block's outputs in. */
function sumFromRight(graph: GraphBuilder, terms: string[], name: string): string {
  let sum = terms[terms.length - 1]!;
  for (let i = terms.length - 2; i >= 0; i--) sum = graph.node('Add', [terms[i]!, sum], i === 0 ? name : `${name}_${i}`);
  return sum;
}

class GraphBuilder {
  readonly nodes: OnnxNode[] = [];
  readonly initializers: OnnxInitializer[] = [];

  constructor(private readonly weights: ReadonlyMap<string, Weight>) {}

  node(op: string, inputs: string[], output: string, attributes?: OnnxNode['attributes']): string {
    this.nodes.push({ op, inputs, outputs: [output], ...(attributes ? { attributes } : {}) });
    return output;
  }

  constant(name: string, dims: number[], values: Float32Array): void {
    this.initializers.push({ name, dims, values });
  }

  /** Adds the tfjs weight `source` as initializer `name`, re-laid out by `values` and `dims`. */
  weight(source: string, name: string, values: (w: Weight) => Float32Array, dims: (shape: number[]) => number[]): string {
    const w = this.weights.get(source);
    if (!w) throw new Error(`weight ${source} missing`);
    this.constant(name, dims(w.shape), values(w));
    return name;
  }

  /** Plain 3x3 convolution with bias; tfjs filters are [h, w, in, out]. */
  conv(x: string, source: string, stride: number, side: number): string {
    const name = onnxName(source);
    const w = this.weight(`${source}/filters`, `${name}_w`, ({ values, shape }) => hwioToOihw(values, shape), ([h, w, i, o]) => [o!, i!, h!, w!]);
    const b = this.weight(`${source}/bias`, `${name}_b`, (w) => w.values, (shape) => shape);
    return this.node('Conv', [x, w, b], name, convAttributes(1, 3, stride, side));
  }

  /** Depthwise 3x3 (tfjs [h, w, channels, 1]) then pointwise 1x1 (tfjs [1, 1, in, out]) with bias. */
  separable(x: string, source: string, stride: number, side: number): string {
    const name = onnxName(source);
    // With one filter per channel, [h, w, c, 1] has the same layout as [h, w, 1, c].
    const dw = this.weight(`${source}/depthwise_filter`, `${name}_dw_w`, ({ values, shape: [h, w, c] }) => hwioToOihw(values, [h!, w!, 1, c!]), ([h, w, c]) => [c!, 1, h!, w!]);
    const pw = this.weight(`${source}/pointwise_filter`, `${name}_pw_w`, ({ values, shape }) => hwioToOihw(values, shape), ([h, w, i, o]) => [o!, i!, h!, w!]);
    const b = this.weight(`${source}/bias`, `${name}_pw_b`, (w) => w.values, (shape) => shape);
    const channels = this.weights.get(`${source}/depthwise_filter`)!.shape[2]!;
    const depthwise = this.node('Conv', [x, dw], `${name}_dw`, convAttributes(channels, 3, stride, side));
    return this.node('Conv', [depthwise, pw, b], `${name}_pw`, convAttributes(1, 1, 1, side / stride));
  }
}

function onnxName(source: string): string {
  return source.replace('/conv', '_c');
}

function convAttributes(group: number, kernel: number, stride: number, side: number): Record<string, number | number[]> {
  const [before, after] = samePadding(side, kernel, stride);
  return { group, kernel_shape: [kernel, kernel], pads: [before, before, after, after], strides: [stride, stride] };
}

// TensorFlow's 'same': output = ceil(input / stride); the padding that needs, with the odd one after.
function samePadding(side: number, kernel: number, stride: number): [number, number] {
  const total = Math.max((Math.ceil(side / stride) - 1) * stride + kernel - side, 0);
  return [Math.floor(total / 2), total - Math.floor(total / 2)];
}

function hwioToOihw(values: Float32Array, shape: number[]): Float32Array {
  const [h, w, i, o] = shape as [number, number, number, number];
  const out = new Float32Array(values.length);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++)
      for (let c = 0; c < i; c++)
        for (let k = 0; k < o; k++) out[((k * i + c) * h + y) * w + x] = values[((y * w + x) * i + c) * o + k]!;
  return out;
}

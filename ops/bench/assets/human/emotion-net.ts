// The emotion model of @vladmandic/human (oarriaga's mini-Xception, trained on FER2013) as an
// ONNX graph, translated node by node from its TensorFlow.js graph model (models/emotion.json).
// The graph model is NHWC; ONNX convolutions are NCHW, so every 4-D tensor is NCHW here and
// the filters are re-laid out. The node kinds it holds, and so all this translates:
//   _FusedConv2D (BiasAdd, optionally Relu), DepthwiseConv2dNative, MaxPool, AddV2, Relu,
//   Mean over the spatial axes, Softmax, Identity.
// TensorFlow's 'same' padding puts the odd row and column after, as ONNX pads allow.
// In front of the network, the preprocessing Human applies before it: RGB 0..255 -> 0..1 ->
// grey (0.2989 R + 0.5870 G + 0.1140 B) -> (grey - 0.5) * 2.
import type { OnnxInitializer, OnnxModel, OnnxNode } from '../../../assets/faceapi/onnx-proto.ts';
import type { Weight } from '../../../assets/faceapi/weights.ts';

export const EMOTION_INPUT_SIDE = 64;
/** Output order of the model (Human's annotations for its grey, oarriaga-trained model). */
export const EMOTION_CLASSES = ['angry', 'disgust', 'fear', 'happy', 'sad', 'surprise', 'neutral'];
const GREY = [0.2989, 0.587, 0.114];

/** A node of a TensorFlow.js graph model's `modelTopology.node`. */
export interface GraphNode {
  name: string;
  op: string;
  input?: string[];
  attr?: Record<string, { s?: string; b?: boolean; i?: string; list?: { s?: string[]; i?: string[] } }>;
}

interface Spatial {
  height: number;
  width: number;
  channels: number;
}

export function buildEmotionNet(graph: readonly GraphNode[], weights: ReadonlyMap<string, Weight>): Omit<OnnxModel, 'producer' | 'metadata'> {
  const byName = new Map(graph.map((node) => [node.name, node]));
  const placeholder = graph.filter((node) => node.op === 'Placeholder');
  const softmax = graph.filter((node) => node.op === 'Softmax');
  if (placeholder.length !== 1 || softmax.length !== 1) throw new Error('expected one input and one softmax in the graph');
  const builder = new Builder(weights);

  // Preprocessing, then the graph's placeholder stands for its result.
  builder.constant('c255', [1], Float32Array.of(255));
  builder.constant('grey_w', [1, 3, 1, 1], Float32Array.from(GREY));
  builder.constant('c05', [1], Float32Array.of(0.5));
  builder.constant('c2', [1], Float32Array.of(2));
  builder.node('Div', ['input', 'c255'], 'unit');
  builder.node('Conv', ['unit', 'grey_w'], 'grey', { kernel_shape: [1, 1] });
  builder.node('Sub', ['grey', 'c05'], 'grey_centred');
  builder.node('Mul', ['grey_centred', 'c2'], 'grey_scaled');
  builder.bind(placeholder[0]!.name, 'grey_scaled', { height: EMOTION_INPUT_SIDE, width: EMOTION_INPUT_SIDE, channels: 1 });

  // Depth-first from the softmax: each node after the nodes it reads, in a fixed order.
  const visit = (name: string): void => {
    if (builder.has(name)) return;
    const node = byName.get(name);
    if (!node) throw new Error(`graph node ${name} missing`);
    if (node.op === 'Const') return;
    for (const input of node.input ?? []) visit(input);
    builder.translate(node);
  };
  const logitsNode = softmax[0]!.input?.[0];
  if (!logitsNode) throw new Error('softmax has no input');
  visit(logitsNode);
  builder.node('Identity', [builder.tensorOf(logitsNode)], 'logits');
  builder.node('Softmax', ['logits'], 'probs', { axis: 1 });

  return {
    opset: 13,
    graphName: 'human_emotion_mini_xception',
    nodes: builder.nodes,
    initializers: builder.initializers,
    inputs: [{ name: 'input', shape: ['N', 3, EMOTION_INPUT_SIDE, EMOTION_INPUT_SIDE] }],
    outputs: [
      { name: 'probs', shape: ['N', EMOTION_CLASSES.length] },
      { name: 'logits', shape: ['N', EMOTION_CLASSES.length] },
    ],
  };
}

class Builder {
  readonly nodes: OnnxNode[] = [];
  readonly initializers: OnnxInitializer[] = [];
  /** Graph-model node name -> ONNX tensor name and, for 4-D tensors, its size. */
  private readonly tensors = new Map<string, { tensor: string; spatial?: Spatial }>();
  private count = 0;

  constructor(private readonly weights: ReadonlyMap<string, Weight>) {}

  has(name: string): boolean {
    return this.tensors.has(name);
  }

  tensorOf(name: string): string {
    const entry = this.tensors.get(name);
    if (!entry) throw new Error(`${name} is not translated yet`);
    return entry.tensor;
  }

  bind(name: string, tensor: string, spatial?: Spatial): void {
    this.tensors.set(name, { tensor, ...(spatial ? { spatial } : {}) });
  }

  node(op: string, inputs: string[], output: string, attributes?: OnnxNode['attributes']): string {
    this.nodes.push({ op, inputs, outputs: [output], ...(attributes ? { attributes } : {}) });
    return output;
  }

  constant(name: string, dims: number[], values: Float32Array): string {
    this.initializers.push({ name, dims, values });
    return name;
  }

  translate(node: GraphNode): void {
    const name = `n${this.count++}_${node.op.replace(/^_/, '').toLowerCase()}`;
    const inputs = node.input ?? [];
    switch (node.op) {
      case '_FusedConv2D': {
        const fused = listOfStrings(node, 'fused_ops');
        if (fused[0] !== 'BiasAdd' || fused.length > 2 || (fused[1] !== undefined && fused[1] !== 'Relu')) {
          throw new Error(`${node.name}: fused ops ${fused.join(',')} not supported`);
        }
        const x = this.spatialOf(inputs[0]!);
        const filter = this.weight(inputs[1]!);
        const [kh, kw, cin, cout] = filter.shape as [number, number, number, number];
        if (cin !== x.spatial.channels) throw new Error(`${node.name}: ${cin} input channels, tensor has ${x.spatial.channels}`);
        const w = this.constant(`${name}_w`, [cout, cin, kh, kw], hwioToOihw(filter.values, filter.shape));
        const bias = this.weight(inputs[2]!);
        const b = this.constant(`${name}_b`, [cout], bias.values);
        const { attributes, out } = convolution(node, x.spatial, kh, kw, cout);
        const conv = this.node('Conv', [x.tensor, w, b], fused[1] ? `${name}_conv` : name, { group: 1, ...attributes });
        this.bind(node.name, fused[1] ? this.node('Relu', [conv], name) : conv, out);
        return;
      }
      case 'DepthwiseConv2dNative': {
        const x = this.spatialOf(inputs[0]!);
        const filter = this.weight(inputs[1]!);
        const [kh, kw, channels, multiplier] = filter.shape as [number, number, number, number];
        if (multiplier !== 1 || channels !== x.spatial.channels) throw new Error(`${node.name}: filter ${filter.shape.join('x')} not supported`);
        // With one filter per channel, [h, w, c, 1] is laid out as [h, w, 1, c].
        const w = this.constant(`${name}_w`, [channels, 1, kh, kw], hwioToOihw(filter.values, [kh, kw, 1, channels]));
        const { attributes, out } = convolution(node, x.spatial, kh, kw, channels);
        this.bind(node.name, this.node('Conv', [x.tensor, w], name, { group: channels, ...attributes }), out);
        return;
      }
      case 'MaxPool': {
        const x = this.spatialOf(inputs[0]!);
        const [, kh, kw] = listOfInts(node, 'ksize');
        const { attributes, out } = convolution(node, x.spatial, kh!, kw!, x.spatial.channels);
        this.bind(node.name, this.node('MaxPool', [x.tensor], name, attributes), out);
        return;
      }
      case 'AddV2': {
        const a = this.spatialOf(inputs[0]!);
        const b = this.spatialOf(inputs[1]!);
        if (a.spatial.height !== b.spatial.height || a.spatial.channels !== b.spatial.channels) throw new Error(`${node.name}: shapes differ`);
        this.bind(node.name, this.node('Add', [a.tensor, b.tensor], name), a.spatial);
        return;
      }
      case 'Relu': {
        const x = this.spatialOf(inputs[0]!);
        this.bind(node.name, this.node('Relu', [x.tensor], name), x.spatial);
        return;
      }
      case 'Mean': {
        const x = this.spatialOf(inputs[0]!);
        const axes = Array.from(this.weight(inputs[1]!).values);
        if (axes.join() !== '1,2' || node.attr?.keep_dims?.b) throw new Error(`${node.name}: only a mean over height and width is supported`);
        // NHWC axes 1, 2 are NCHW axes 2, 3.
        this.bind(node.name, this.node('ReduceMean', [x.tensor], name, { axes: [2, 3], keepdims: 0 }));
        return;
      }
      case 'Identity':
        this.bind(node.name, this.tensorOf(inputs[0]!));
        return;
      default:
        throw new Error(`${node.name}: op ${node.op} not supported`);
    }
  }

  private spatialOf(name: string): { tensor: string; spatial: Spatial } {
    const entry = this.tensors.get(name);
    if (!entry?.spatial) throw new Error(`${name} is not a translated 4-D tensor`);
    return { tensor: entry.tensor, spatial: entry.spatial };
  }

  private weight(name: string): Weight {
    const w = this.weights.get(name);
    if (!w) throw new Error(`weight ${name} missing`);
    return w;
  }
}

/** Pads, strides and output size of a convolution or pooling node, TensorFlow's rules. */
function convolution(node: GraphNode, x: Spatial, kh: number, kw: number, channels: number) {
  const strides = listOfInts(node, 'strides');
  const dilations = node.attr?.dilations?.list?.i?.map(Number) ?? [1, 1, 1, 1];
  if (dilations.some((d) => d !== 1)) throw new Error(`${node.name}: dilations not supported`);
  const [, sh, sw] = strides as [number, number, number, number];
  const padding = stringAttr(node, 'padding');
  let top = 0;
  let bottom = 0;
  let left = 0;
  let right = 0;
  let height: number;
  let width: number;
  if (padding === 'VALID') {
    height = Math.floor((x.height - kh) / sh) + 1;
    width = Math.floor((x.width - kw) / sw) + 1;
  } else if (padding === 'SAME') {
    height = Math.ceil(x.height / sh);
    width = Math.ceil(x.width / sw);
    [top, bottom] = samePadding(x.height, height, kh, sh);
    [left, right] = samePadding(x.width, width, kw, sw);
  } else {
    throw new Error(`${node.name}: padding ${padding} not supported`);
  }
  return {
    attributes: { kernel_shape: [kh, kw], pads: [top, left, bottom, right], strides: [sh, sw] },
    out: { height, width, channels },
  };
}

function samePadding(size: number, out: number, kernel: number, stride: number): [number, number] {
  const total = Math.max((out - 1) * stride + kernel - size, 0);
  return [Math.floor(total / 2), total - Math.floor(total / 2)];
}

function stringAttr(node: GraphNode, key: string): string {
  const value = node.attr?.[key]?.s;
  if (value === undefined) throw new Error(`${node.name}: attribute ${key} missing`);
  return Buffer.from(value, 'base64').toString('utf8');
}

function listOfStrings(node: GraphNode, key: string): string[] {
  return (node.attr?.[key]?.list?.s ?? []).map((s) => Buffer.from(s, 'base64').toString('utf8'));
}

function listOfInts(node: GraphNode, key: string): number[] {
  const values = node.attr?.[key]?.list?.i;
  if (!values) throw new Error(`${node.name}: attribute ${key} missing`);
  return values.map(Number);
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

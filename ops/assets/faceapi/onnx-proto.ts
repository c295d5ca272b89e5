// Just enough of the ONNX protobuf schema (onnx.proto, IR version 7) to write a model of
// float32 tensors: the model, its graph, nodes with integer attributes, initializers, and the
// graph's inputs and outputs. Fields are written in field-number order, so the bytes depend
// only on the model given.

export interface OnnxNode {
  op: string;
  inputs: string[];
  outputs: string[];
  /** Integer (INT) or integer list (INTS) attributes. */
  attributes?: Record<string, number | number[]>;
}

export interface OnnxInitializer {
  name: string;
  dims: number[];
  values: Float32Array;
}

/** A float32 graph input or output; a string dimension is symbolic (e.g. the batch). */
export interface OnnxValue {
  name: string;
  shape: (number | string)[];
}

export interface OnnxModel {
  producer: string;
  opset: number;
  graphName: string;
  nodes: OnnxNode[];
  initializers: OnnxInitializer[];
  inputs: OnnxValue[];
  outputs: OnnxValue[];
  metadata: Record<string, string>;
}

const IR_VERSION = 7;
const FLOAT = 1;
const ATTRIBUTE_INT = 2;
const ATTRIBUTE_INTS = 7;

export function encodeModel(model: OnnxModel): Buffer {
  return concat(
    int(1, IR_VERSION),
    text(2, model.producer),
    bytes(7, encodeGraph(model)),
    bytes(8, concat(text(1, ''), int(2, model.opset))),
    ...Object.entries(model.metadata).map(([key, value]) => bytes(14, concat(text(1, key), text(2, value)))),
  );
}

function encodeGraph(model: OnnxModel): Buffer {
  return concat(
    ...model.nodes.map((node) => bytes(1, encodeNode(node))),
    text(2, model.graphName),
    ...model.initializers.map((tensor) => bytes(5, encodeTensor(tensor))),
    ...model.inputs.map((value) => bytes(11, encodeValue(value))),
    ...model.outputs.map((value) => bytes(12, encodeValue(value))),
  );
}

function encodeNode(node: OnnxNode): Buffer {
  return concat(
    ...node.inputs.map((name) => text(1, name)),
    ...node.outputs.map((name) => text(2, name)),
    text(4, node.op),
    ...Object.entries(node.attributes ?? {}).map(([name, value]) => bytes(5, encodeAttribute(name, value))),
  );
}

function encodeAttribute(name: string, value: number | number[]): Buffer {
  return typeof value === 'number'
    ? concat(text(1, name), int(3, value), int(20, ATTRIBUTE_INT))
    : concat(text(1, name), ...value.map((v) => int(8, v)), int(20, ATTRIBUTE_INTS));
}

function encodeTensor(tensor: OnnxInitializer): Buffer {
  const raw = Buffer.alloc(tensor.values.length * 4);
  tensor.values.forEach((v, i) => raw.writeFloatLE(v, i * 4));
  return concat(...tensor.dims.map((d) => int(1, d)), int(2, FLOAT), text(8, tensor.name), bytes(9, raw));
}

function encodeValue(value: OnnxValue): Buffer {
  const dims = value.shape.map((d) => bytes(1, typeof d === 'number' ? int(1, d) : text(2, d)));
  const tensorType = concat(int(1, FLOAT), bytes(2, concat(...dims)));
  return concat(text(1, value.name), bytes(2, bytes(1, tensorType)));
}

// Protobuf wire format: a key (field number and wire type) then a varint or a length-prefixed blob.

function int(field: number, value: number): Buffer {
  return concat(varint(field * 8), varint(value));
}

function bytes(field: number, payload: Buffer): Buffer {
  return concat(varint(field * 8 + 2), varint(payload.length), payload);
}

function text(field: number, value: string): Buffer {
  return bytes(field, Buffer.from(value, 'utf8'));
}

function varint(value: number): Buffer {
  if (!Number.isSafeInteger(value)) throw new Error(`not an integer: ${value}`);
  // Negative int64 values take ten bytes in two's complement.
  let rest = BigInt.asUintN(64, BigInt(value));
  const out: number[] = [];
  while (rest >= 0x80n) {
    out.push(Number(rest & 0x7fn) | 0x80);
    rest >>= 7n;
  }
  out.push(Number(rest));
  return Buffer.from(out);
}

function concat(...parts: Buffer[]): Buffer {
  return Buffer.concat(parts);
}

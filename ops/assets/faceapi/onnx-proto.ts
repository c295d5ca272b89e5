// Just enough of the ONNX protobuf schema (onnx.proto, IR version 7) to write a model of
// float32 tensors: the model, its graph, nodes with integer attributes, initializers, and the
// graph's inputs and outputs, written with the runtime's protobuf codec
// (actors/models/protobuf.ts). Fields are written in field-number order, so the bytes depend
// only on the model given.
import { bytesField, messageField, stringField as text, varintField as int, writeFields, type Field } from '../../../actors/models/protobuf.ts';

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

export function encodeModel(model: OnnxModel): Uint8Array {
  return writeFields([
    int(1, IR_VERSION),
    text(2, model.producer),
    messageField(7, graph(model)),
    messageField(8, [text(1, ''), int(2, model.opset)]),
    ...Object.entries(model.metadata).map(([key, value]) => messageField(14, [text(1, key), text(2, value)])),
  ]);
}

function graph(model: OnnxModel): Field[] {
  return [
    ...model.nodes.map((node) => messageField(1, nodeFields(node))),
    text(2, model.graphName),
    ...model.initializers.map((tensor) => messageField(5, tensorFields(tensor))),
    ...model.inputs.map((value) => messageField(11, valueFields(value))),
    ...model.outputs.map((value) => messageField(12, valueFields(value))),
  ];
}

function nodeFields(node: OnnxNode): Field[] {
  return [
    ...node.inputs.map((name) => text(1, name)),
    ...node.outputs.map((name) => text(2, name)),
    text(4, node.op),
    ...Object.entries(node.attributes ?? {}).map(([name, value]) => messageField(5, attributeFields(name, value))),
  ];
}

function attributeFields(name: string, value: number | number[]): Field[] {
  return typeof value === 'number'
    ? [text(1, name), int(3, value), int(20, ATTRIBUTE_INT)]
    : [text(1, name), ...value.map((v) => int(8, v)), int(20, ATTRIBUTE_INTS)];
}

function tensorFields(tensor: OnnxInitializer): Field[] {
  const raw = Buffer.alloc(tensor.values.length * 4);
  tensor.values.forEach((v, i) => raw.writeFloatLE(v, i * 4));
  return [...tensor.dims.map((d) => int(1, d)), int(2, FLOAT), text(8, tensor.name), bytesField(9, raw)];
}

function valueFields(value: OnnxValue): Field[] {
  const dims = value.shape.map((d) => messageField(1, [typeof d === 'number' ? int(1, d) : text(2, d)]));
  const tensorType = [int(1, FLOAT), messageField(2, dims)];
  return [text(1, value.name), messageField(2, [messageField(1, tensorType)])];
}

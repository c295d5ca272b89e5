// The parts of onnx.proto that the in-memory model rewrites read and write, on top of the wire
// format of protobuf.ts: field numbers, and a node's inputs, outputs, operator and attributes.
import { WireType, messageField, numberOf, packedNumbersOf, readFields, stringField, textOf, type Field } from './protobuf.ts';

/** Field numbers from onnx.proto. */
export const Model = { graph: 7, opsetImport: 8 } as const;
export const OpsetId = { domain: 1, version: 2 } as const;
export const Graph = { node: 1, initializer: 5, input: 11, output: 12 } as const;
export const Tensor = { dataType: 2, int32Data: 5, name: 8, rawData: 9 } as const;
export const Node = { input: 1, output: 2, name: 3, opType: 4, attribute: 5, domain: 7 } as const;
const Attribute = { name: 1, ints: 8, graph: 6, graphs: 11 } as const;
export const ValueInfo = { name: 1, type: 2 } as const;
export const TypeProto = { tensorType: 1 } as const;
export const TensorType = { shape: 2 } as const;
export const Shape = { dim: 1 } as const;

export interface NodeParts {
  inputs: string[];
  outputs: string[];
  opType: string;
  fields: Field[];
}

export function nodeParts(field: Field): NodeParts {
  const fields = readFields(field.value);
  const texts = (number: number) => fields.filter((part) => part.number === number).map(textOf);
  return { inputs: texts(Node.input), outputs: texts(Node.output), opType: texts(Node.opType)[0] ?? '', fields };
}

/** The node with its inputs and outputs replaced, everything else as it was. */
export function nodeWith(node: NodeParts, inputs: string[], outputs: string[]): Field {
  const rest = node.fields.filter((part) => part.number !== Node.input && part.number !== Node.output);
  return messageField(Graph.node, [
    ...inputs.map((name) => stringField(Node.input, name)),
    ...outputs.map((name) => stringField(Node.output, name)),
    ...rest,
  ]);
}

/** The integers, none negative, of a node's attribute `name` (such as a Transpose's `perm`); undefined without it. */
export function intsAttribute(node: NodeParts, name: string): number[] | undefined {
  for (const part of node.fields) {
    if (part.number !== Node.attribute) continue;
    const attribute = readFields(part.value);
    if (!attribute.some((entry) => entry.number === Attribute.name && textOf(entry) === name)) continue;
    return attribute.filter((entry) => entry.number === Attribute.ints).flatMap(integersOf);
  }
  return undefined;
}

/** The name of an initializer (a tensor of the graph). */
export function tensorName(field: Field): string {
  const name = readFields(field.value).find((part) => part.number === Tensor.name);
  return name ? textOf(name) : '';
}

/** The name a value info (a graph's input or output) describes. */
export function valueName(field: Field): string {
  const name = readFields(field.value).find((part) => part.number === ValueInfo.name);
  return name ? textOf(name) : '';
}

export function hasAttributes(node: NodeParts): boolean {
  return node.fields.some((part) => part.number === Node.attribute);
}

export function hasSubgraphs(node: NodeParts): boolean {
  return node.fields.some((part) => part.number === Node.attribute && readFields(part.value).some(isSubgraph));
}

/** An attribute's entry holding a graph: a branch of If, a body of Loop or Scan. */
export function isSubgraph(part: Field): boolean {
  return (part.number === Attribute.graph || part.number === Attribute.graphs) && part.wireType === WireType.bytes;
}

/** The node with each of its subgraphs replaced by `rewrite` of it. */
export function withSubgraphs(node: NodeParts, rewrite: (graph: Field[]) => Field[]): Field {
  const fields = node.fields.map((part) => {
    if (part.number !== Node.attribute) return part;
    const attribute = readFields(part.value);
    return messageField(
      Node.attribute,
      attribute.map((entry) => (isSubgraph(entry) ? messageField(entry.number, rewrite(readFields(entry.value))) : entry)),
    );
  });
  return messageField(Graph.node, fields);
}

/** The graph and every graph inside its nodes (branches of If, bodies of Loop and Scan), outermost first. */
export function allGraphs(graph: Field[]): Field[][] {
  const inner = graph
    .filter((field) => field.number === Graph.node)
    .flatMap((field) => nodeParts(field).fields.filter((part) => part.number === Node.attribute))
    .flatMap((attribute) => readFields(attribute.value).filter(isSubgraph))
    .flatMap((subgraph) => allGraphs(readFields(subgraph.value)));
  return [graph, ...inner];
}

/** Every name a node reads or the graph returns, subgraphs included. */
export function namesUsed(graph: Field[]): Set<string> {
  const used = new Set<string>();
  for (const field of allGraphs(graph).flat()) {
    if (field.number === Graph.output) used.add(valueName(field));
    if (field.number === Graph.node) for (const name of nodeParts(field).inputs) used.add(name);
  }
  return used;
}

/** The message `field` with each of its parts numbered `number` replaced by `rewrite` of it. */
export function withParts(field: Field, number: number, rewrite: (part: Field) => Field): Field {
  return messageField(field.number, readFields(field.value).map((part) => (part.number === number ? rewrite(part) : part)));
}

/** The graph of a model's fields, and a function that puts a rewritten graph back in their place. */
export function modelGraph(modelFields: Field[]): { graph: Field[]; withGraph: (graph: Field[]) => Field[] } {
  const at = modelFields.findIndex((field) => field.number === Model.graph);
  if (at < 0) throw new Error('the model has no graph');
  return {
    graph: readFields(modelFields[at]!.value),
    withGraph: (graph) => modelFields.map((field, index) => (index === at ? messageField(Model.graph, graph) : field)),
  };
}

/** Repeated integers are written packed (one length-delimited field) or one varint each. */
function integersOf(entry: Field): number[] {
  return entry.wireType === WireType.bytes ? packedNumbersOf(entry) : [numberOf(entry)];
}

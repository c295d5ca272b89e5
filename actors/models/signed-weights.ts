// Moonshine's weights are published as unsigned bytes with a zero point: a weight is
// (byte - zero point) x scale. onnxruntime multiplies unsigned activations by unsigned weights
// with a kernel that widens both to 16 bits, and by signed weights with the processor's byte dot
// product (VNNI), which multiplies and adds bytes into 32 bits in one instruction. Storing a
// weight table and its zero point signed, both less 128 (each byte's top bit flipped), leaves
// every difference, and so every product, exactly as it was. This rewrite does that in memory
// as a model is loaded, like the decoder's (eight-bit-output-layer.ts); the file stays the one
// the manifest's sha256 names.
//
// Only where the processor has VNNI (signed-byte-products.ts): without it, onnxruntime's signed
// kernel adds pairs of products in 16 bits, which can saturate.
//
// Measured on this machine (the JFK sample, 11 s, five each): the same text from tiny and base;
// CPU per transcript tiny 180 -> 144 ms, base 336 -> 242 ms, most of it in the encoder. The
// decoder's token table, read by a Gather as well, is left unsigned: signing it too saved
// nothing measurable.
import { bytesField, messageField, numberOf, packedNumbersOf, readFields, varintField, WireType, writeFields, type Field } from './protobuf.ts';
import { Graph, Tensor, allGraphs, modelGraph, nodeParts, tensorName, valueName } from './onnx-graph.ts';

const UINT8 = 2;
const INT8 = 3;

/** Inputs read as (value - zero point): the value's position and its zero point's. */
const DEQUANTIZING: Record<string, readonly [number, number]> = {
  DequantizeLinear: [0, 2],
  MatMulInteger: [1, 3],
};

/** A node reading a value: its operator, its inputs, and where among them the value is. */
interface Read {
  opType: string;
  inputs: string[];
  at: number;
}

/**
 * The model with every unsigned 8-bit table of its outer graph that is only ever read with its
 * zero point, and that zero point, stored signed. Throws if there is none, so a different model
 * fails at load.
 */
export function withSignedEightBitWeights(model: Uint8Array): Uint8Array {
  const { graph, withGraph } = modelGraph(readFields(model));
  const reads = new Map<string, Read[]>();
  const definitions = new Map<string, number>();
  const read = (name: string, by: Read) => reads.set(name, [...(reads.get(name) ?? []), by]);
  for (const subgraph of allGraphs(graph)) {
    for (const field of subgraph) {
      if (field.number === Graph.initializer) count(definitions, tensorName(field));
      if (field.number === Graph.input) count(definitions, valueName(field));
      // A graph's result is read as it is: no zero point beside it.
      if (field.number === Graph.output) read(valueName(field), { opType: '', inputs: [], at: 0 });
      if (field.number !== Graph.node) continue;
      const { opType, inputs, outputs } = nodeParts(field);
      inputs.forEach((name, at) => read(name, { opType, inputs, at }));
      for (const name of outputs) count(definitions, name);
    }
  }
  // A name defined twice, in a branch say, may stand for two values: it is left as it is.
  const signed = new Set([...unsignedTables(graph)].filter((name) => definitions.get(name) === 1));
  // A table dropped can disqualify the one it was read with, so repeat until nothing changes.
  for (let changed = true; changed; ) {
    changed = false;
    for (const table of signed) {
      if (readAsDifferences(table, signed, reads)) continue;
      signed.delete(table);
      changed = true;
    }
  }
  if (signed.size === 0) throw new Error('the model has no unsigned 8-bit weights read only with their zero point');
  return writeFields(withGraph(graph.map((field) => (field.number === Graph.initializer && signed.has(tensorName(field)) ? asSigned(field) : field))));
}

/** Whether every read of `table` pairs it, as value or as zero point, with another table of `signed`. */
function readAsDifferences(table: string, signed: Set<string>, reads: Map<string, Read[]>): boolean {
  return (reads.get(table) ?? []).every(({ opType, inputs, at }) => {
    const pair = DEQUANTIZING[opType];
    if (!pair?.includes(at)) return false;
    return signed.has(inputs[pair[0] === at ? pair[1] : pair[0]] ?? '');
  });
}

/** The outer graph's uint8 initializers that hold their bytes in the model. */
function unsignedTables(graph: Field[]): Set<string> {
  const names = new Set<string>();
  for (const field of graph) {
    if (field.number !== Graph.initializer) continue;
    const parts = readFields(field.value);
    const dataType = parts.find((part) => part.number === Tensor.dataType);
    const stored = parts.some((part) => part.number === Tensor.rawData || part.number === Tensor.int32Data);
    if (dataType && numberOf(dataType) === UINT8 && stored) names.add(tensorName(field));
  }
  return names;
}

/** The tensor with each byte less 128, as signed bytes (two's complement: the top bit flipped). */
function asSigned(field: Field): Field {
  const parts = readFields(field.value);
  // Small byte tensors may be written as int32_data, a value each; they move to raw_data.
  const written = parts.filter((part) => part.number === Tensor.int32Data);
  const values = written.flatMap((part) => (part.wireType === WireType.bytes ? packedNumbersOf(part) : [numberOf(part)]));
  const signedParts = parts.flatMap((part): Field[] => {
    if (part.number === Tensor.dataType) return [varintField(Tensor.dataType, INT8)];
    if (part.number === Tensor.rawData) return [bytesField(Tensor.rawData, part.value.map((byte) => byte ^ 0x80))];
    if (part === written[0]) return [bytesField(Tensor.rawData, Uint8Array.from(values, (byte) => byte ^ 0x80))];
    return part.number === Tensor.int32Data ? [] : [part];
  });
  return messageField(Graph.initializer, signedParts);
}

function count(counts: Map<string, number>, name: string): void {
  counts.set(name, (counts.get(name) ?? 0) + 1);
}

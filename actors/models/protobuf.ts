// Just enough of the protobuf wire format to edit an ONNX graph's nodes: a message is read as its
// list of fields, each kept as the bytes it was written with, so a model's weights are sliced,
// never decoded, and a message written back is byte for byte what was read unless a field changed.
// Groups (wire types 3 and 4) are deprecated and absent from ONNX; they are refused.
//
// The one protobuf codec of the project: the model converters (ops/assets/) write their models
// with it too. Not a generated codec of onnx.proto (onnx-proto on npm): that would decode every
// weight into numbers and encode them again, where the runtime only edits a few nodes of models
// hundreds of megabytes large and must keep the rest byte for byte.

export const WireType = { varint: 0, fixed64: 1, bytes: 2, fixed32: 5 } as const;

export interface Field {
  number: number;
  wireType: number;
  /** A varint's own bytes, a fixed number's 4 or 8 bytes, or a length-delimited field's payload. */
  value: Uint8Array;
}

const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder('utf-8', { fatal: true });

/** The fields of one message, in the order written. Throws on truncated or malformed input. */
export function readFields(message: Uint8Array): Field[] {
  const fields: Field[] = [];
  let at = 0;
  while (at < message.length) {
    const key = readVarint(message, at);
    at = key.end;
    const number = Math.floor(key.value / 8);
    const wireType = key.value % 8;
    if (number < 1) throw new Error(`protobuf field number ${number} at byte ${at}`);
    let start = at;
    switch (wireType) {
      case WireType.varint:
        at = readVarint(message, at).end;
        break;
      case WireType.fixed64:
        at += 8;
        break;
      case WireType.fixed32:
        at += 4;
        break;
      case WireType.bytes: {
        const length = readVarint(message, at);
        start = length.end;
        at = start + length.value;
        break;
      }
      default:
        throw new Error(`protobuf wire type ${wireType} is not supported (field ${number})`);
    }
    if (at > message.length) throw new Error(`protobuf field ${number} runs past the end of its message`);
    fields.push({ number, wireType, value: message.subarray(start, at) });
  }
  return fields;
}

/** The message made of `fields`, in their order. */
export function writeFields(fields: readonly Field[]): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const { number, wireType, value } of fields) {
    parts.push(varint(number * 8 + wireType));
    if (wireType === WireType.bytes) parts.push(varint(value.length));
    parts.push(value);
  }
  const message = new Uint8Array(parts.reduce((total, part) => total + part.length, 0));
  let at = 0;
  for (const part of parts) {
    message.set(part, at);
    at += part.length;
  }
  return message;
}

export function stringField(number: number, text: string): Field {
  return { number, wireType: WireType.bytes, value: utf8.encode(text) };
}

export function messageField(number: number, fields: readonly Field[]): Field {
  return { number, wireType: WireType.bytes, value: writeFields(fields) };
}

/** A negative value is written as protobuf writes an int64: ten bytes, in two's complement. */
export function varintField(number: number, value: number): Field {
  return { number, wireType: WireType.varint, value: varint(value) };
}

export function bytesField(number: number, value: Uint8Array): Field {
  return { number, wireType: WireType.bytes, value };
}

export function textOf(field: Field): string {
  return fromUtf8.decode(field.value);
}

/** The value of a varint field that holds no negative number. */
export function numberOf(field: Field): number {
  return readVarint(field.value, 0).value;
}

/** The values of a packed repeated varint field that holds no negative number. */
export function packedNumbersOf(field: Field): number[] {
  const values: number[] = [];
  for (let at = 0; at < field.value.length; ) {
    const { value, end } = readVarint(field.value, at);
    values.push(value);
    at = end;
  }
  return values;
}

/** Values up to 2^53 are exact, which covers every length, key and count in a model file. */
function readVarint(bytes: Uint8Array, from: number): { value: number; end: number } {
  let value = 0;
  for (let at = from, scale = 1; at < bytes.length && at < from + 10; at++, scale *= 128) {
    const byte = bytes[at]!;
    value += (byte & 0x7f) * scale;
    if (byte < 0x80) return { value, end: at + 1 };
  }
  throw new Error(`protobuf varint at byte ${from} is truncated or too long`);
}

function varint(value: number): Uint8Array {
  if (!Number.isSafeInteger(value)) throw new Error(`cannot write ${value} as a protobuf varint`);
  const bytes: number[] = [];
  let rest = BigInt.asUintN(64, BigInt(value));
  for (; rest >= 0x80n; rest >>= 7n) bytes.push(Number(rest & 0x7fn) | 0x80);
  bytes.push(Number(rest));
  return Uint8Array.from(bytes);
}

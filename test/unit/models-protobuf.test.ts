import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import {
  WireType,
  messageField,
  numberOf,
  readFields,
  stringField,
  textOf,
  varintField,
  writeFields,
  type Field,
} from '../../actors/models/protobuf.ts';

const bytes = (...values: number[]) => Uint8Array.from(values);

test('varints and strings are written as protobuf writes them', () => {
  // Field 1 = 150 and field 2 = "testing": the examples of the protobuf encoding guide.
  assert.equal(writeFields([varintField(1, 150)]), bytes(0x08, 0x96, 0x01));
  // A negative int64 (an ONNX attribute such as axis = -1): ten bytes of two's complement.
  assert.equal(writeFields([varintField(1, -1)]), bytes(0x08, ...Array(9).fill(0xff), 0x01));
  assert.equal(writeFields([stringField(2, 'testing')]), bytes(0x12, 0x07, 0x74, 0x65, 0x73, 0x74, 0x69, 0x6e, 0x67));
  const [field] = readFields(bytes(0x08, 0x96, 0x01));
  assert.is(numberOf(field!), 150);
  assert.is(textOf(readFields(bytes(0x12, 0x02, 0x68, 0x69))[0]!), 'hi');
});

const field: fc.Arbitrary<Field> = fc.oneof(
  fc.record({ number: fc.integer({ min: 1, max: 2 ** 29 - 1 }), value: fc.maxSafeNat() }).map(({ number, value }) => varintField(number, value)),
  fc.record({ number: fc.integer({ min: 1, max: 2 ** 29 - 1 }), value: fc.uint8Array({ maxLength: 300 }) }).map(({ number, value }) => ({ number, wireType: WireType.bytes, value })),
  fc.record({ number: fc.integer({ min: 1, max: 2 ** 29 - 1 }), value: fc.uint8Array({ minLength: 4, maxLength: 4 }) }).map(({ number, value }) => ({ number, wireType: WireType.fixed32, value })),
  fc.record({ number: fc.integer({ min: 1, max: 2 ** 29 - 1 }), value: fc.uint8Array({ minLength: 8, maxLength: 8 }) }).map(({ number, value }) => ({ number, wireType: WireType.fixed64, value })),
);

test('any message reads back as the fields it was written from', () => {
  fc.assert(
    fc.property(fc.array(field, { maxLength: 20 }), (fields) => {
      const read = readFields(writeFields(fields));
      assert.equal(read.map((f) => ({ ...f, value: [...f.value] })), fields.map((f) => ({ ...f, value: [...f.value] })));
      assert.equal(writeFields(read), writeFields(fields));
    }),
    { numRuns: 500 },
  );
});

test('a message cut short anywhere inside a field is refused, never misread', () => {
  fc.assert(
    fc.property(fc.array(field, { minLength: 1, maxLength: 5 }), fc.nat(), (fields, cut) => {
      const whole = writeFields(fields);
      const boundaries = new Set<number>([0]);
      for (let i = 1, at = 0; i <= fields.length; i++) boundaries.add((at += writeFields(fields.slice(i - 1, i)).length));
      const at = cut % whole.length;
      if (boundaries.has(at)) return;
      assert.throws(() => readFields(whole.subarray(0, at)));
    }),
    { numRuns: 500 },
  );
});

test('groups, field number 0, overlong varints and unwritable numbers are refused', () => {
  assert.throws(() => readFields(bytes(0x0b, 0x0c)), /wire type 3/);
  assert.throws(() => readFields(bytes(0x00, 0x01)), /field number 0/);
  assert.throws(() => readFields(bytes(0x08, ...Array(10).fill(0xff), 0x01)), /varint/);
  assert.throws(() => varintField(1, 2 ** 60));
});

test('nested messages are written with their length', () => {
  const inner = [stringField(1, 'x'), varintField(2, 3)];
  const [outer] = readFields(writeFields([messageField(7, inner)]));
  assert.is(outer!.number, 7);
  assert.equal(readFields(outer!.value).map((f) => f.number), [1, 2]);
});

test.run();

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { readConfig } from '../../bus/config.ts';
import { MODEL_FILES } from '../../actors/models/files.ts';
import { loadModel, ort } from '../../actors/models/onnx.ts';
import { messageField, readFields, stringField, textOf, varintField, WireType, writeFields, type Field } from '../../actors/models/protobuf.ts';
import { SpeechToText } from '../../actors/speech/moonshine.ts';
import { withEightBitOutputLayer } from '../../actors/speech/eight-bit-output-layer.ts';
import { jfkPcm, pcmToFloat } from '../../ops/support/voice-media.ts';

const config = readConfig();
const FLOAT = 1;
const UINT8 = 2;

function tensor(name: string, dataType: number, dims: number[], raw: Uint8Array): Field[] {
  return [...dims.map((dim) => varintField(1, dim)), varintField(2, dataType), stringField(8, name), { number: 9, wireType: WireType.bytes, value: raw }];
}

/** A float tensor's name, type and shape. */
function valueInfo(name: string, dims: number[]): Field[] {
  const shape = messageField(2, dims.map((dim) => messageField(1, [varintField(1, dim)])));
  return [stringField(1, name), messageField(2, [messageField(1, [varintField(1, FLOAT), shape])])];
}

function node(opType: string, inputs: string[], outputs: string[]): Field {
  return messageField(1, [...inputs.map((name) => stringField(1, name)), ...outputs.map((name) => stringField(2, name)), stringField(3, `${opType}_0`), stringField(4, opType)]);
}

/** y = x · dequantize(w8): x float [1, 3], w8 uint8 [3, 4] with one scale and zero point; or x · w with w float. */
function product(weights: 'eight-bit' | 'float'): Uint8Array {
  const w8 = Uint8Array.from([0, 50, 100, 150, 200, 250, 128, 129, 130, 10, 20, 255]);
  const scale = new Uint8Array(Float32Array.from([0.02]).buffer);
  const graph: Field[] =
    weights === 'eight-bit'
      ? [
          node('DequantizeLinear', ['w8', 'scale', 'zero'], ['w']),
          node('MatMul', ['x', 'w'], ['y']),
          messageField(5, tensor('w8', UINT8, [3, 4], w8)),
          messageField(5, tensor('scale', FLOAT, [], scale)),
          messageField(5, tensor('zero', UINT8, [], Uint8Array.from([128]))),
        ]
      : [node('MatMul', ['x', 'w'], ['y']), messageField(5, tensor('w', FLOAT, [3, 4], new Uint8Array(new Float32Array(12).fill(0.5).buffer)))];
  const io = [messageField(11, valueInfo('x', [1, 3])), messageField(12, valueInfo('y', [1, 4]))];
  return writeFields([varintField(1, 8), messageField(8, [varintField(2, 14)]), messageField(7, [stringField(2, 'product'), ...graph, ...io])]);
}

const opTypes = (model: Uint8Array) => {
  const graph = readFields(readFields(model).find((field) => field.number === 7)!.value);
  return graph.filter((field) => field.number === 1).map((field) => textOf(readFields(field.value).find((part) => part.number === 4)!));
};

async function multiply(model: Uint8Array, x: number[]): Promise<number[]> {
  const session = await loadModel(model);
  const { y } = await session.run({ x: new ort.Tensor('float32', Float32Array.from(x), [1, 3]) });
  return [...(y!.data as Float32Array)];
}

test('a product with a dequantized 8-bit constant becomes one DynamicQuantizeMatMul, with the same result', async () => {
  const model = product('eight-bit');
  const rewritten = withEightBitOutputLayer(model);
  assert.equal(opTypes(model), ['DequantizeLinear', 'MatMul']);
  assert.equal(opTypes(rewritten), ['DynamicQuantizeMatMul']);
  const x = [0.3, -1.2, 2.5];
  const expected = await multiply(model, x);
  const got = await multiply(rewritten, x);
  assert.ok(expected.some((value) => Math.abs(value) > 1), `products ${expected}`);
  // x is quantized to 256 steps over its range, 0.015 apart: each term is off by at most half a step times |w| <= 2.56.
  for (let i = 0; i < 4; i++) assert.ok(Math.abs(got[i]! - expected[i]!) < 0.06, `column ${i}: ${got[i]} against ${expected[i]}`);
});

test('a model without such a product is refused, not passed through', () => {
  assert.throws(() => withEightBitOutputLayer(product('float')), /no product with a dequantized constant/);
  assert.throws(() => withEightBitOutputLayer(new Uint8Array(0)), /no graph/);
});

test("Moonshine's decoder: both branches' output layers are rewritten, and the JFK sample gives the same text", async () => {
  const published = await readFile(join(config.modelsDir, MODEL_FILES.speechTinyDecoder));
  const rewritten = withEightBitOutputLayer(published);
  const products = (model: Uint8Array) => (Buffer.from(model).toString('latin1').match(/DynamicQuantizeMatMul/g) ?? []).length;
  assert.is(products(rewritten) - products(published), 2);

  const encoder = await loadModel(join(config.modelsDir, MODEL_FILES.speechTinyEncoder));
  const samples = pcmToFloat(await jfkPcm());
  const asPublished = await new SpeechToText('tiny', encoder, await loadModel(published)).transcribe(samples);
  const withEightBit = await new SpeechToText('tiny', encoder, await loadModel(rewritten)).transcribe(samples);
  assert.is(withEightBit, asPublished);
  assert.match(withEightBit, /ask not what your country can do for you/i);
});

test.run();

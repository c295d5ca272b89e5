import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { readConfig } from '../../bus/config.ts';
import { SPEECH_MODEL_FILES, type SpeechModel } from '../../actors/models/files.ts';
import { loadModel, ort } from '../../actors/models/onnx.ts';
import { numberOf, readFields } from '../../actors/models/protobuf.ts';
import { Graph, Tensor, modelGraph, tensorName } from '../../actors/models/onnx-graph.ts';
import { withSignedEightBitWeights } from '../../actors/models/signed-weights.ts';
import { multipliesSignedBytesExactly, thisProcessorMultipliesSignedBytesExactly } from '../../actors/models/signed-byte-products.ts';
import { withEightBitOutputLayer } from '../../actors/speech/eight-bit-output-layer.ts';
import { SpeechToText, emptyAttentionCache } from '../../actors/speech/moonshine.ts';
import { jfkPcm, pcmToFloat } from '../../ops/support/voice-media.ts';

const config = readConfig();
const UINT8 = 2;
const INT8 = 3;

/** Each initializer's name to its ONNX data type. */
function tableTypes(model: Uint8Array): Map<string, number> {
  const types = new Map<string, number>();
  for (const field of modelGraph(readFields(model)).graph) {
    if (field.number !== Graph.initializer) continue;
    const parts = readFields(field.value);
    types.set(tensorName(field), numberOf(parts.find((part) => part.number === Tensor.dataType)!));
  }
  return types;
}

function countOf(types: Map<string, number>, type: number): number {
  return [...types.values()].filter((value) => value === type).length;
}

test('signed bytes are multiplied exactly only where /proc/cpuinfo lists VNNI among the flags', () => {
  assert.ok(multipliesSignedBytesExactly('processor\t: 0\nflags\t\t: fpu sse avx2 avx512f avx512_vnni avx512_bf16\n'));
  assert.ok(multipliesSignedBytesExactly('processor\t: 0\nflags\t\t: fpu sse avx2 avx_vnni\n'));
  assert.not.ok(multipliesSignedBytesExactly('processor\t: 0\nflags\t\t: fpu sse avx2 avx512f avx512bw\n'));
  assert.not.ok(multipliesSignedBytesExactly('model name\t: avx512_vnni in a name\nflags\t\t: fpu sse avx2\n'));
  assert.not.ok(multipliesSignedBytesExactly('processor\t: 0\nFeatures\t: fp asimd asimddp\n'));
  assert.not.ok(multipliesSignedBytesExactly(''));
});

for (const model of ['tiny', 'base'] as SpeechModel[]) {
  const exact = thisProcessorMultipliesSignedBytesExactly();
  (exact ? test : test.skip)(`Moonshine ${model} with signed weights: the encoder and decoder compute what they did, bit for bit`, async () => {
    const files = SPEECH_MODEL_FILES[model];
    const publishedEncoder = await readFile(join(config.modelsDir, files.encoder));
    const publishedDecoder = withEightBitOutputLayer(await readFile(join(config.modelsDir, files.decoder)));
    const signedEncoder = withSignedEightBitWeights(publishedEncoder);
    const signedDecoder = withSignedEightBitWeights(publishedDecoder);

    // Every byte table of the encoder is read by its products only, so all of them turn signed.
    const encoderBefore = tableTypes(publishedEncoder);
    const encoderAfter = tableTypes(signedEncoder);
    assert.ok(countOf(encoderBefore, UINT8) >= 48, `${countOf(encoderBefore, UINT8)} byte tables`);
    assert.is(countOf(encoderAfter, INT8), countOf(encoderBefore, INT8) + countOf(encoderBefore, UINT8));
    assert.is(countOf(encoderAfter, UINT8), 0);
    // The decoder's token table is also looked up by a Gather, which reads the bytes themselves:
    // it stays unsigned, and so does its zero point.
    const decoderAfter = tableTypes(signedDecoder);
    const tokenTables = [...decoderAfter].filter(([name]) => /embed_tokens\.weight.*_(quantized|zero_point)$/.test(name));
    assert.is(tokenTables.length, 2);
    for (const [name, type] of tokenTables) assert.is(type, UINT8, name);
    assert.ok(countOf(decoderAfter, INT8) > 0);

    const samples = pcmToFloat(await jfkPcm());
    const audio = { input_values: new ort.Tensor('float32', samples, [1, samples.length]) };
    const [encoderA, encoderB] = await Promise.all([loadModel(publishedEncoder), loadModel(signedEncoder)]);
    const hidden = (await encoderA.run(audio)).last_hidden_state!;
    assert.equal((await encoderB.run(audio)).last_hidden_state!.data, hidden.data);

    const [decoderA, decoderB] = await Promise.all([loadModel(publishedDecoder), loadModel(signedDecoder)]);
    const firstStep = {
      input_ids: new ort.Tensor('int64', BigInt64Array.from([1n]), [1, 1]),
      encoder_hidden_states: hidden,
      use_cache_branch: new ort.Tensor('bool', Uint8Array.from([0]), [1]),
      ...emptyAttentionCache(decoderA),
    };
    assert.equal((await decoderB.run(firstStep)).logits!.data, (await decoderA.run(firstStep)).logits!.data);

    const text = await new SpeechToText(model, encoderB, decoderB).transcribe(samples);
    assert.is(text, await new SpeechToText(model, encoderA, decoderA).transcribe(samples));
    assert.match(text, /ask not what your country can do for you/i);
  });
}

test('a model with no unsigned weights read with their zero point is refused, not passed through', async () => {
  const encoder = await readFile(join(config.modelsDir, SPEECH_MODEL_FILES.tiny.encoder));
  assert.throws(() => withSignedEightBitWeights(withSignedEightBitWeights(encoder)), /no unsigned 8-bit weights/);
  const faces = await readFile(join(config.modelsDir, 'face_detection_yunet_2023mar_dynamic.onnx'));
  assert.throws(() => withSignedEightBitWeights(faces), /no unsigned 8-bit weights/);
  assert.throws(() => withSignedEightBitWeights(new Uint8Array(0)), /no graph/);
});

test.run();

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { readConfig } from '../../bus/config.ts';
import { SPEECH_MODEL_FILES, type SpeechModel } from '../../actors/models/files.ts';
import { loadModel, ort } from '../../actors/models/onnx.ts';
import { readFields, type Field } from '../../actors/models/protobuf.ts';
import { Graph, allGraphs, modelGraph, nodeParts } from '../../actors/models/onnx-graph.ts';
import { SpeechToText, emptyAttentionCache, type Feeds } from '../../actors/speech/moonshine.ts';
import { withEightBitOutputLayer } from '../../actors/speech/eight-bit-output-layer.ts';
import { withCrossAttentionKeysCachedAsRead } from '../../actors/speech/cross-attention-keys.ts';
import { jfkPcm, pcmToFloat } from '../../ops/support/voice-media.ts';

const config = readConfig();

/** Every node of a graph and of its subgraphs. */
function allNodes(graph: Field[]): ReturnType<typeof nodeParts>[] {
  return allGraphs(graph).flatMap((inner) => inner.filter((field) => field.number === Graph.node).map(nodeParts));
}

/** Transposes that read a cached cross-attention key: one per layer as published, none rewritten. */
function keyTransposes(model: Uint8Array): number {
  return allNodes(modelGraph(readFields(model)).graph).filter(
    (node) => node.opType === 'Transpose' && /^past_key_values\.\d+\.encoder\.key$/.test(node.inputs[0] ?? ''),
  ).length;
}

for (const model of ['tiny', 'base'] as SpeechModel[]) {
  test(`Moonshine ${model}: every layer's audio keys are cached as read, and the JFK sample gives the same text`, async () => {
    const files = SPEECH_MODEL_FILES[model];
    const published = withEightBitOutputLayer(await readFile(join(config.modelsDir, files.decoder)));
    const rewritten = withCrossAttentionKeysCachedAsRead(published);
    const before = await loadModel(published);
    const after = await loadModel(rewritten);
    const layers = before.inputNames.filter((name) => /^past_key_values\.\d+\.encoder\.key$/.test(name)).length;
    assert.ok(layers >= 6, `${layers} layers`);
    assert.is(keyTransposes(published), layers);
    assert.is(keyTransposes(rewritten), 0);

    const encoder = await loadModel(join(config.modelsDir, files.encoder));
    const samples = pcmToFloat(await jfkPcm());
    const asPublished = await new SpeechToText(model, encoder, before).transcribe(samples);
    const asRead = await new SpeechToText(model, encoder, after).transcribe(samples);
    assert.is(asRead, asPublished);
    assert.match(asRead, /ask not what your country can do for you/i);

    // The first step's cached keys come out [batch, heads, size, frames].
    const hidden = (await encoder.run({ input_values: new ort.Tensor('float32', samples, [1, samples.length]) })).last_hidden_state!;
    const firstStep = await after.run(firstStepFeeds(after, hidden));
    const [, frames] = hidden.dims;
    const [, heads, , size] = firstStep['present.0.decoder.key']!.dims;
    assert.equal(firstStep['present.0.encoder.key']!.dims, [1, heads, size, frames]);
  });
}

test('a decoder whose keys are not cached as published is refused, not passed through', async () => {
  const published = await readFile(join(config.modelsDir, SPEECH_MODEL_FILES.tiny.decoder));
  const once = withCrossAttentionKeysCachedAsRead(published);
  assert.throws(() => withCrossAttentionKeysCachedAsRead(once), /6 layers, 0 written, 0 read/);
  assert.throws(() => withCrossAttentionKeysCachedAsRead(new Uint8Array(0)), /no graph/);
});

/** The start token, the audio, and every cache input empty. */
function firstStepFeeds(decoder: ort.InferenceSession, hidden: ort.Tensor): Feeds {
  return {
    input_ids: new ort.Tensor('int64', BigInt64Array.from([1n]), [1, 1]),
    encoder_hidden_states: hidden,
    use_cache_branch: new ort.Tensor('bool', Uint8Array.from([0]), [1]),
    ...emptyAttentionCache(decoder),
  };
}

test.run();

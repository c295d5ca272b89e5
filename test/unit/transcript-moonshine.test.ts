import { readConfig } from '../../bus/config.ts';
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { thisProcessorMultipliesSignedBytesExactly } from '../../actors/models/signed-byte-products.ts';
import { SpeechToText } from '../../actors/speech/moonshine.ts';
import { jfkPcm, pcmToFloat } from '../../ops/support/voice-media.ts';
import { wordErrorRate } from '../../ops/support/word-error-rate.ts';

const config = readConfig();
const signedWeights = thisProcessorMultipliesSignedBytesExactly();

const JFK = 'And so my fellow Americans, ask not what your country can do for you, ask what you can do for your country.';

/** Loaded once for the tests that use it: loading is most of what a test costs. */
const tiny = await SpeechToText.load(config.modelsDir, 'tiny', signedWeights);

// How fast it runs is measured by ops/bench/transcription.ts, not here.
for (const model of ['tiny', 'base'] as const) {
  test(`Moonshine ${model} transcribes the JFK sample with under 10% word errors`, async () => {
    const samples = pcmToFloat(await jfkPcm());
    const stt = model === 'tiny' ? tiny : await SpeechToText.load(config.modelsDir, model, signedWeights);
    const text = await stt.transcribe(samples);
    assert.ok(wordErrorRate(JFK, text) < 0.1, `got "${text}"`);
    assert.is(text, text.trim());
  });
}

test('silence and too-short input give no text', async () => {
  assert.is(await tiny.transcribe(new Float32Array(2 * 16000)), '');
  assert.is(await tiny.transcribe(new Float32Array(100)), '');
});

test.run();

// Noisy speech goes to Moonshine base, clean speech to tiny: on JFK's sample under pink noise at
// 10 dB SNR the routed transcript is base's and has fewer word errors than tiny's; the clean
// sample is tiny's; a threshold of 0 leaves every segment to tiny.
import { readConfig } from '../../bus/config.ts';
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { thisProcessorMultipliesSignedBytesExactly } from '../../actors/models/signed-byte-products.ts';
import { SpeechToText } from '../../actors/speech/moonshine.ts';
import { NoiseRoutedTranscriber } from '../../actors/speech/noise-routed-transcriber.ts';
import { makeNoise, mixAtSnr } from '../../ops/support/noise.ts';
import { JFK_TEXT, jfkPcm, pcmToFloat } from '../../ops/support/voice-media.ts';
import { wordErrorRate } from '../../ops/support/word-error-rate.ts';

const config = readConfig();
const signedWeights = thisProcessorMultipliesSignedBytesExactly();
const [tiny, base] = await Promise.all([SpeechToText.load(config.modelsDir, 'tiny', signedWeights), SpeechToText.load(config.modelsDir, 'base', signedWeights)]);
const routed = new NoiseRoutedTranscriber(tiny, base, config.noisySpeechBelowSnrDb);
const jfk = pcmToFloat(await jfkPcm());
const noisy = mixAtSnr(jfk, makeNoise('pink', jfk.length), 10);

test('speech under pink noise at 10 dB goes to base, with fewer word errors than tiny makes', async () => {
  const [byTiny, byBase, text] = await Promise.all([tiny.transcribe(noisy), base.transcribe(noisy), routed.transcribe(noisy)]);
  assert.is(text, byBase);
  assert.ok(wordErrorRate(JFK_TEXT, byBase) < wordErrorRate(JFK_TEXT, byTiny), `tiny: "${byTiny}", base: "${byBase}"`);
});

test('clean speech goes to tiny', async () => {
  assert.is(await routed.transcribe(jfk), await tiny.transcribe(jfk));
});

test('a threshold of 0 dB leaves noisy speech to tiny too', async () => {
  const tinyOnly = new NoiseRoutedTranscriber(tiny, base, 0);
  assert.is(await tinyOnly.transcribe(noisy), await tiny.transcribe(noisy));
});

test.run();

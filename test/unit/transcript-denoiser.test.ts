// RNNoise in front of Moonshine: on JFK's sample under pink noise at 10 dB SNR the transcript
// has fewer word errors with it than without; clean speech goes through as it came.
import { readConfig } from '../../bus/config.ts';
import { test } from '../support/uvu.ts';
import * as assert from 'uvu/assert';
import { DenoisedTranscriber } from '../../actors/speech/denoised-transcriber.ts';
import { SpeechDenoiser } from '../../actors/speech/denoiser.ts';
import { SpeechToText } from '../../actors/speech/moonshine.ts';
import { makeNoise, mixAtSnr } from '../../ops/bench/lib/noise.ts';
import { jfkPcm, pcmToFloat } from '../../ops/support/voice-media.ts';
import { wordErrorRate } from '../../ops/support/word-error-rate.ts';

const JFK = 'And so my fellow Americans, ask not what your country can do for you, ask what you can do for your country.';

const stt = await SpeechToText.load(readConfig().modelsDir);
const denoised = new DenoisedTranscriber(stt, await SpeechDenoiser.load());
const jfk = pcmToFloat(await jfkPcm());

test('under pink noise at 10 dB the denoised transcript has fewer word errors', async () => {
  const noisy = mixAtSnr(jfk, makeNoise('pink', jfk.length), 10);
  const plain = await stt.transcribe(noisy);
  const cleaned = await denoised.transcribe(noisy);
  assert.ok(wordErrorRate(JFK, cleaned) < wordErrorRate(JFK, plain), `without: "${plain}", with: "${cleaned}"`);
});

test('clean speech is transcribed as it came', async () => {
  assert.is(await denoised.transcribe(jfk), await stt.transcribe(jfk));
});

test.run();

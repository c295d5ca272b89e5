import { readConfig } from '../../bus/config.ts';
import { test } from '../support/uvu.ts';
import * as assert from 'uvu/assert';
import { SpeechToText } from '../../actors/speech/moonshine.ts';
import { jfkPcm, pcmToFloat } from '../../ops/support/voice-media.ts';
import { wordErrorRate } from '../../ops/support/word-error-rate.ts';

const config = readConfig();

const JFK = 'And so my fellow Americans, ask not what your country can do for you, ask what you can do for your country.';

test('word error rate counts substitutions, insertions and deletions', () => {
  assert.is(wordErrorRate('ask not what', 'Ask not, what'), 0);
  assert.is(wordErrorRate('ask not what', 'ask what'), 1 / 3);
  assert.is(wordErrorRate('ask not what', 'ask not not what you'), 2 / 3);
});

// How fast it runs is measured by ops/bench/transcription.ts, not here.
test('the JFK sample is transcribed with under 10% word errors', async () => {
  const samples = pcmToFloat(await jfkPcm());
  const stt = await SpeechToText.load(config.modelsDir);
  const text = await stt.transcribe(samples);
  assert.ok(wordErrorRate(JFK, text) < 0.1, `got "${text}"`);
  assert.is(text, text.trim());
});

test('silence and too-short input give no text', async () => {
  const stt = await SpeechToText.load(config.modelsDir);
  assert.is(await stt.transcribe(new Float32Array(2 * 16000)), '');
  assert.is(await stt.transcribe(new Float32Array(100)), '');
});

test.run();

// NOISY_SPEECH_BELOW_SNR_DB names the two measured alternatives to routing by noise: `tiny` and
// `base`; a number is the threshold in dB; anything else stops the process at start.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { readConfig } from '../../bus/config.ts';

const routing = (value?: string) => readConfig(value === undefined ? {} : { NOISY_SPEECH_BELOW_SNR_DB: value }).noisySpeechBelowSnrDb;

test('by noise at 30 dB unless told; tiny for every segment, or base for every one, by name', () => {
  assert.is(routing(), 30);
  assert.is(routing('12.5'), 12.5);
  assert.is(routing('tiny'), 0);
  assert.is(routing('base'), Infinity);
});

test('a value neither named nor a number of dB is refused, naming what it may be', () => {
  assert.throws(() => routing('small'), /NOISY_SPEECH_BELOW_SNR_DB must be tiny, base or a number >= 0, got "small"/);
  assert.throws(() => routing('-3'), /NOISY_SPEECH_BELOW_SNR_DB must be a number >= 0/);
  assert.throws(() => routing('toString'), /must be tiny, base or a number/);
});

test.run();

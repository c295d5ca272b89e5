import { readConfig } from '../../bus/config.ts';
import { test } from '../support/uvu.ts';
import * as assert from 'uvu/assert';
import { ThreadedSpeechToText } from '../../actors/transcript/threaded.ts';
import { SpeechToTextPool } from '../../actors/transcript/pool.ts';
import { jfkPcm, pcmToFloat } from '../../ops/support/voice-media.ts';

const config = readConfig();

test('the speech thread transcribes off the main thread, and the event loop keeps turning', async () => {
  const stt = await ThreadedSpeechToText.start(config.modelsDir);
  try {
    const samples = pcmToFloat(await jfkPcm());
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    const started = Date.now();
    const [first, second] = await Promise.all([stt.transcribe(samples), stt.transcribe(samples.slice(0, 16000 * 4))]);
    const elapsed = Date.now() - started;
    clearInterval(timer);
    assert.match(first.toLowerCase(), /ask not what your country can do for you/);
    assert.match(second.toLowerCase(), /fellow americans/);
    // A blocked event loop would have missed most 5 ms ticks while the model ran.
    assert.ok(ticks >= (elapsed / 5) * 0.5, `${ticks} ticks in ${elapsed} ms`);
  } finally {
    await stt.close();
  }
});

test('the pool gives each segment to the thread with the fewest in hand, and each answers its own', async () => {
  const threads = await Promise.all([ThreadedSpeechToText.start(config.modelsDir), ThreadedSpeechToText.start(config.modelsDir)]);
  const pool = new SpeechToTextPool(threads);
  try {
    const samples = pcmToFloat(await jfkPcm());
    const whole = pool.transcribe(samples);
    const opening = pool.transcribe(samples.slice(0, 16000 * 4));
    assert.equal(threads.map((thread) => thread.inFlight), [1, 1]);
    const third = pool.transcribe(samples.slice(0, 16000 * 4));
    assert.equal(threads.map((thread) => thread.inFlight).sort(), [1, 2]);
    const [first, second, last] = await Promise.all([whole, opening, third]);
    assert.match(first.toLowerCase(), /ask not what your country can do for you/);
    assert.match(second.toLowerCase(), /fellow americans/);
    assert.match(last.toLowerCase(), /fellow americans/);
    assert.equal(threads.map((thread) => thread.inFlight), [0, 0]);
  } finally {
    await pool.close();
  }
});

test('a pool of no threads is refused', () => {
  assert.throws(() => new SpeechToTextPool([]), /at least one thread/);
});

test.run();

import { readConfig } from '../../bus/config.ts';
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { ThreadedSpeechToText } from '../../actors/speech/threaded.ts';
import { SpeechToTextPool } from '../../actors/speech/pool.ts';
import { jfkPcm, pcmToFloat } from '../../ops/support/voice-media.ts';

const config = readConfig();
const options = { modelsDir: config.modelsDir, noisyBelowSnrDb: config.noisySpeechBelowSnrDb };

test('the speech thread transcribes off the main thread: the event loop turns while it runs', async () => {
  const stt = new ThreadedSpeechToText(options);
  try {
    const samples = pcmToFloat(await jfkPcm());
    const transcriptions = Promise.all([stt.transcribe(samples), stt.transcribe(samples.slice(0, 16000 * 4))]);
    // A model run that held this thread would end before the loop could turn once more.
    const first = await Promise.race([transcriptions.then(() => 'transcribed'), new Promise((resolve) => setImmediate(() => resolve('turned')))]);
    assert.is(first, 'turned');
    const [whole, opening] = await transcriptions;
    assert.match(whole.toLowerCase(), /ask not what your country can do for you/);
    assert.match(opening.toLowerCase(), /fellow americans/);
  } finally {
    await stt.close();
  }
});

test('the pool gives each segment to the thread with the fewest in hand, and each answers its own', async () => {
  const threads = [new ThreadedSpeechToText(options), new ThreadedSpeechToText(options)];
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

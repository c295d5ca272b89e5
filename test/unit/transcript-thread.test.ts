import { readConfig } from '../../bus/config.ts';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ThreadedSpeechToText } from '../../actors/transcript/threaded.ts';
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

test.run();

import { readConfig } from '../../bus/config.ts';
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import type { SpeechSegment } from '../../bus/contracts/rows.ts';
import type { SpeechAudio } from '../../actors/voice/analyzer.ts';
import { thisProcessorMultipliesSignedBytesExactly } from '../../actors/models/signed-byte-products.ts';
import { SpeechToText } from '../../actors/speech/moonshine.ts';
import { TranscriptionQueue } from '../../actors/speech/queue.ts';
import { jfkPcm, pcmToFloat } from '../../ops/support/voice-media.ts';

const config = readConfig();
/** One model for every test: loading it is most of what a test would cost. */
const stt = await SpeechToText.load(config.modelsDir, 'tiny', thisProcessorMultipliesSignedBytesExactly());

const SESSION = '0123456789abcdef01234567';

/** JFK's phrases, cut at his pauses (seconds in the recording). */
async function phrases(): Promise<SpeechAudio[]> {
  const samples = pcmToFloat(await jfkPcm());
  const cuts: Array<[number, number]> = [[0.2, 2.3], [3.1, 4.4], [5.3, 7.9], [8.0, 11.0]];
  return cuts.map(([start, end]) => ({ start: 60 + start, end: 60 + end, speech: end - start, samples: samples.slice(start * 16000, end * 16000) }));
}

function collect(limit: number) {
  const rows: SpeechSegment[] = [];
  /** The segment each row was handed with. */
  const sources: SpeechAudio[] = [];
  const drops: number[] = [];
  const queue = new TranscriptionQueue({
    session: SESSION, limit, stt, onRow: (row, segment) => (rows.push(row), sources.push(segment)), onDropped: (total) => drops.push(total),
  });
  return { queue, rows, sources, drops };
}

test('over the limit the oldest waiting segment is dropped and counted', async () => {
  const [first, second, third, fourth] = await phrases();
  const { queue, rows, sources, drops } = collect(1);
  // The first starts at once; the others wait, one at a time, so the second and third are dropped.
  for (const segment of [first!, second!, third!, fourth!]) queue.push(segment);
  await queue.close();
  assert.equal(drops, [1, 2]);
  assert.equal(rows.map((row) => [row.start, row.end]), [[60.2, 62.3], [68, 71]]);
  // Each row comes with its own segment, the one transcribed while the queue dropped others
  // included: its speech time is that segment's (the speaking rate's divisor).
  assert.equal(sources, [first, fourth]);
  assert.match(rows[0]!.text, /fellow.Americans/i);
  assert.match(rows[1]!.text, /what you can do for your country/i);
  for (const row of rows) assert.ok(row.session === SESSION && row.neutral > 0 && row.compound >= -1 && row.compound <= 1);
});

test('close transcribes everything waiting; silence gives no row', async () => {
  const [first, , third] = await phrases();
  const { queue, rows, drops } = collect(8);
  queue.push(first!);
  queue.push({ start: 63, end: 65, speech: 0, samples: new Float32Array(2 * 16000) });
  queue.push(third!);
  await queue.close();
  assert.equal(drops, []);
  assert.is(rows.length, 2);
  assert.match(rows[1]!.text, /country/i);
  assert.throws(() => queue.push(first!), /closed/);
});

test('each segment reports how long it waited behind the ones before it', async () => {
  const [first, second] = await phrases();
  const waits: number[] = [];
  let firstDoneAt = 0;
  const queue = new TranscriptionQueue({
    session: SESSION,
    limit: 8,
    stt,
    onRow: () => (firstDoneAt ||= Date.now()),
    onDropped: () => assert.unreachable('nothing is over the limit'),
    onWaited: (seconds) => waits.push(seconds),
  });
  queue.push(first!);
  queue.push(second!);
  const secondQueuedBy = Date.now();
  await queue.close();
  assert.is(waits.length, 2);
  assert.ok(waits[0]! < waits[1]!, `the first starts before the second (${waits})`);
  // The second was queued by secondQueuedBy and starts once the first's row is told: its wait
  // holds at least the rest of the first's run, however busy the machine.
  const firstRanOn = (firstDoneAt - secondQueuedBy) / 1000;
  assert.ok(waits[1]! >= firstRanOn && waits[1]! > 0.01, `the second waited for the first: ${waits[1]} s, the first ran on ${firstRanOn} s after it was queued`);
});

test.run();

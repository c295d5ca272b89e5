import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import type { AudioSecond } from '../../bus/contracts/rows.ts';
import type { SpeechAudio } from '../../actors/voice/analyzer.ts';
import { VoiceThread } from '../../actors/voice/threaded.ts';
import { VoiceActivityModel } from '../../actors/voice/vad.ts';
import { VoiceStreams } from '../../actors/voice/voice-streams.ts';
import { readConfig } from '../../bus/config.ts';
import { waitUntil } from '../../ops/stack/process.ts';
import { jfkPcm } from '../../ops/support/voice-media.ts';

const config = readConfig();
const model = await VoiceActivityModel.load(config.modelsDir);
const SESSION = '0123456789abcdef01234567';
const CHUNK = 4096;

interface Result {
  rows: AudioSecond[];
  segments: SpeechAudio[];
}

function collector(): Result & { onSecond(row: AudioSecond): void; onSegment(segment: SpeechAudio): void } {
  const rows: AudioSecond[] = [];
  const segments: SpeechAudio[] = [];
  return { rows, segments, onSecond: (row) => rows.push(row), onSegment: (segment) => segments.push(segment) };
}

/** The JFK sample, or its samples reversed: the same level, different speech. */
async function voices(): Promise<Buffer[]> {
  const jfk = await jfkPcm();
  const reversed = Buffer.alloc(jfk.length);
  for (let i = 0; i < jfk.length; i += 2) reversed.writeInt16LE(jfk.readInt16LE(i), jfk.length - 2 - i);
  return [jfk, reversed];
}

async function alone(pcm: Buffer): Promise<Result> {
  const streams = new VoiceStreams({ model, maxBacklogSamples: Infinity, onShed: () => {}, onFailed: () => {} });
  const out = collector();
  const stream = streams.open({ session: SESSION, startOffset: 0, ...out });
  for (let at = 0; at < pcm.length; at += CHUNK) streams.write(stream, pcm.subarray(at, at + CHUNK));
  await streams.close(stream);
  return out;
}

function close(a: Result, b: Result, label: string): void {
  assert.is(a.rows.length, b.rows.length, `${label}: rows`);
  a.rows.forEach((row, i) => {
    const other = b.rows[i]!;
    assert.is(row.second, other.second);
    assert.ok(Math.abs(row.speech - other.speech) < 1e-6, `${label}: second ${row.second} speech ${row.speech} vs ${other.speech}`);
    assert.ok(Math.abs(row.intensity - other.intensity) < 1e-9 && Math.abs(row.frequency - other.frequency) < 1e-9, `${label}: level and pitch`);
  });
  assert.equal(a.segments.map((s) => [s.start, s.end]), b.segments.map((s) => [s.start, s.end]), `${label}: segments`);
}

test('streams analysed together, their steps in one VAD call, give exactly what each gives alone', async () => {
  const [jfk, reversed] = await voices();
  const expected = [await alone(jfk!), await alone(reversed!)];
  const streams = new VoiceStreams({ model, maxBacklogSamples: Infinity, onShed: () => {}, onFailed: () => {} });
  const outs = [collector(), collector()];
  const opened = outs.map((out) => streams.open({ session: SESSION, startOffset: 0, ...out }));
  // Uneven chunks, interleaved: the streams are at different points of their audio in each round.
  for (let at = 0; at < jfk!.length; at += CHUNK) {
    streams.write(opened[0]!, jfk!.subarray(at, at + CHUNK));
    streams.write(opened[1]!, reversed!.subarray(at, at + CHUNK / 2));
    streams.write(opened[1]!, reversed!.subarray(at + CHUNK / 2, at + CHUNK));
  }
  await Promise.all(opened.map((stream) => streams.close(stream)));
  assert.ok(expected[0]!.segments.length > 0 && expected[0]!.rows.some((row) => row.speech > 0.5), 'the sample has speech');
  close(outs[0]!, expected[0]!, 'JFK');
  close(outs[1]!, expected[1]!, 'reversed');
});

test('audio arriving from several streams within GATHER_MS goes through the VAD together', async () => {
  const [jfk] = await voices();
  let calls = 0;
  const counted = await VoiceActivityModel.load(config.modelsDir, () => () => calls++);
  const streams = new VoiceStreams({ model: counted, maxBacklogSamples: Infinity, onShed: () => {}, onFailed: () => {} });
  const opened = [0, 1, 2, 3].map(() => streams.open({ session: SESSION, startOffset: 0, ...collector() }));
  // One chunk (four 32 ms steps) from each stream, each in a turn of the event loop of its own,
  // as live pipes deliver them. (Turns 10 ms apart took over GATHER_MS on a busy machine.)
  for (const [i, stream] of opened.entries()) {
    streams.write(stream, jfk!.subarray(i * CHUNK, (i + 1) * CHUNK));
    await new Promise((resolve) => setImmediate(resolve));
  }
  // Every step analysed (a round of one stream's steps would have made more calls by then).
  await waitUntil('the four chunks analysed', async () => calls >= 4 && opened.every((stream) => stream.backlog === 0), 10_000);
  assert.is(calls, 4, 'four rounds of four streams, not sixteen of one');
  await Promise.all(opened.map((stream) => streams.close(stream)));
});

test('a stream whose backlog passes the limit skips its oldest audio, moves its clock on, and says how much', async () => {
  const [jfk] = await voices();
  const shed: number[] = [];
  const streams = new VoiceStreams({ model, maxBacklogSamples: 2 * 16000, onShed: (_, samples) => shed.push(samples), onFailed: () => {} });
  const out = collector();
  const stream = streams.open({ session: SESSION, startOffset: 100, ...out });
  streams.write(stream, jfk!.subarray(0, 10 * 32000)); // 10 s at once, 2 s allowed
  await streams.close(stream);
  assert.equal(shed, [8 * 16000]);
  assert.equal(out.rows.map((row) => row.second), [108, 109], 'only the two newest seconds, at their own time');
});

test('the voice thread gives the rows and segments of the same analysis in this thread', async () => {
  const [jfk, reversed] = await voices();
  const expected = [await alone(jfk!), await alone(reversed!)];
  const thread = await VoiceThread.start({ modelsDir: config.modelsDir, maxBacklogSeconds: 60 });
  try {
    const outs = [collector(), collector()];
    const failures: Error[] = [];
    const opened = outs.map((out) => thread.open(SESSION, 0, { ...out, onShed: () => {}, onFailed: (error) => failures.push(error) }));
    for (let at = 0; at < jfk!.length; at += CHUNK) {
      opened[0]!.write(jfk!.subarray(at, at + CHUNK));
      opened[1]!.write(reversed!.subarray(at, at + CHUNK));
    }
    await Promise.all(opened.map((stream) => stream.close()));
    assert.equal(failures, []);
    close(outs[0]!, expected[0]!, 'JFK in the thread');
    close(outs[1]!, expected[1]!, 'reversed in the thread');
    assert.equal(outs[0]!.segments[0]!.samples.length, expected[0]!.segments[0]!.samples.length, 'segment audio crosses over');
  } finally {
    await thread.close();
  }
});

test.run();

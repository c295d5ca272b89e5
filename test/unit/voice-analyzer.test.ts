import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import type { AudioSecond } from '../../bus/contracts/rows.ts';
import type { SpeechAudio } from '../../actors/voice/analyzer.ts';
import { levelDbfs, SILENCE_DBFS } from '../../actors/voice/level.ts';
import { S16Decoder } from '../../actors/voice/pcm.ts';
import { jfkPcm } from '../../ops/support/voice-media.ts';
import { VoiceActivityModel } from '../../actors/voice/vad.ts';
import { VoiceStreams } from '../../actors/voice/voice-streams.ts';
import { readConfig } from '../../bus/config.ts';

const model = await VoiceActivityModel.load(readConfig().modelsDir);

const SESSION = '0123456789abcdef01234567';

function tonePcm(hz: number, amplitude: number, seconds: number): Buffer {
  const pcm = Buffer.alloc(seconds * 16000 * 2);
  for (let i = 0; i < seconds * 16000; i++) pcm.writeInt16LE(Math.round(amplitude * 32767 * Math.sin((2 * Math.PI * hz * i) / 16000)), 2 * i);
  return pcm;
}

async function analyse(chunks: Buffer[], startOffset = 0): Promise<{ rows: AudioSecond[]; segments: SpeechAudio[] }> {
  const rows: AudioSecond[] = [];
  const segments: SpeechAudio[] = [];
  const streams = new VoiceStreams({ model, maxBacklogSamples: Infinity, onShed: () => {}, onFailed: () => {} });
  const stream = streams.open({ session: SESSION, startOffset, onSecond: (row) => rows.push(row), onSegment: (segment) => segments.push(segment) });
  for (const chunk of chunks) streams.write(stream, chunk);
  await streams.close(stream);
  return { rows, segments };
}

test('level: silence has a finite floor, a full-scale sine is about -3 dBFS', () => {
  assert.is(levelDbfs(new Float32Array(1000)), SILENCE_DBFS);
  const sine = new Float32Array(16000).map((_, i) => Math.sin((2 * Math.PI * 440 * i) / 16000));
  assert.ok(Math.abs(levelDbfs(sine) + 3.01) < 0.05, `got ${levelDbfs(sine)}`);
});

test('s16 decoding keeps a sample split across chunks', () => {
  const decoder = new S16Decoder();
  const pcm = Buffer.from([0x34, 0x12, 0xff, 0x80, 0x01, 0x00]); // 0x1234, -32513, 1
  const first = Array.from(decoder.decode(pcm.subarray(0, 3)));
  const rest = Array.from(decoder.decode(pcm.subarray(3)));
  assert.equal([...first, ...rest].map((x) => Math.round(x * 32768)), [0x1234, -32513, 1]);
});

test('a 220 Hz tone reads 220 Hz, voiced, every second', async () => {
  const { rows } = await analyse([tonePcm(220, 0.5, 3)]);
  assert.equal(rows.map((row) => row.second), [0, 1, 2]);
  for (const row of rows) {
    assert.ok(Math.abs(row.frequency - 220) <= 2, `second ${row.second}: ${row.frequency} Hz`);
    assert.ok(row.voiced > 0.9, `voiced share ${row.voiced}`);
  }
});

test('silence is unvoiced, not speech, and at the level floor', async () => {
  const { rows, segments } = await analyse([Buffer.alloc(2 * 16000 * 2)]);
  assert.is(rows.length, 2);
  for (const row of rows) {
    assert.equal({ ...row }, {
      session: SESSION, second: row.second, frequency: 0, intensity: SILENCE_DBFS, voiced: 0, speech: 0,
      voicedFrames: 0, semitoneSum: 0, semitoneSquares: 0, speechSeconds: 0,
    });
  }
  assert.is(segments.length, 0);
});

test('half amplitude reads 6 dB below full amplitude', async () => {
  const full = (await analyse([tonePcm(300, 0.9, 2)])).rows;
  const half = (await analyse([tonePcm(300, 0.45, 2)])).rows;
  for (let i = 0; i < full.length; i++) {
    const difference = full[i]!.intensity - half[i]!.intensity;
    assert.ok(Math.abs(difference - 6.02) <= 0.5, `second ${i}: ${difference} dB`);
  }
});

test('seconds follow the start offset; the last partial second is reported', async () => {
  // 2.5 s of tone starting 10.75 s into the session covers seconds 10 to 13.
  const { rows } = await analyse([tonePcm(220, 0.5, 2.5)], 10.75);
  assert.equal(rows.map((row) => row.second), [10, 11, 12, 13]);
  assert.ok(rows.every((row) => row.intensity > -10 && row.intensity < 0));
});

test('odd chunk boundaries give exactly the rows and segments of one big push', async () => {
  // The sample twice, 2 s apart: the speech of each is one segment.
  const jfk = await jfkPcm();
  const pcm = Buffer.concat([jfk, Buffer.alloc(2 * 16000 * 2), jfk]);
  const whole = await analyse([pcm], 3.2);
  const sizes = [1, 7, 333, 1001, 2, 4099];
  const chunks: Buffer[] = [];
  for (let at = 0, i = 0; at < pcm.length; i++) {
    const size = sizes[i % sizes.length]!;
    chunks.push(pcm.subarray(at, at + size));
    at += size;
  }
  const split = await analyse(chunks, 3.2);
  assert.ok(whole.rows.length >= 11 && whole.segments.length >= 2, 'speech gives rows and segments');
  assert.equal(split.rows, whole.rows);
  assert.equal(
    split.segments.map(({ start, end, samples }) => ({ start, end, samples: Array.from(samples) })),
    whole.segments.map(({ start, end, samples }) => ({ start, end, samples: Array.from(samples) })),
  );
});

test.run();

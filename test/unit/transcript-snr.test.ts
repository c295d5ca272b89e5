// Each transcript row carries how noisy its audio was: the SNR estimate the noise routing chose
// its transcriber by. JFK's sample, clean and under pink noise at 20, 10 and 5 dB, goes through
// the transcription queue to a router whose two transcribers only say which one they are: a row
// below the threshold must be the noisy transcriber's, every other the clean one's.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import type { SpeechSegment } from '../../bus/contracts/rows.ts';
import { segmentSnrDb } from '../../actors/voice/level.ts';
import { NoiseRoutedTranscriber } from '../../actors/speech/noise-routed-transcriber.ts';
import { TranscriptionQueue } from '../../actors/speech/queue.ts';
import { makeNoise, mixAtSnr } from '../../ops/support/noise.ts';
import { jfkPcm, pcmToFloat } from '../../ops/support/voice-media.ts';

const SESSION = '0123456789abcdef01234567';
const THRESHOLD_DB = 30;
const router = new NoiseRoutedTranscriber({ transcribe: async () => 'clean' }, { transcribe: async () => 'noisy' }, THRESHOLD_DB);

test("a row's snrDb is the estimate its transcriber was chosen by", async () => {
  const jfk = pcmToFloat(await jfkPcm());
  const levels = [Infinity, 20, 10, 5];
  const audio = levels.map((snrDb) => mixAtSnr(jfk, makeNoise('pink', jfk.length), snrDb));
  const rows: SpeechSegment[] = [];
  const queue = new TranscriptionQueue({ session: SESSION, limit: 10, stt: router, onRow: (row) => rows.push(row), onDropped: () => {} });
  audio.forEach((samples, i) => queue.push({ start: 11 * i, end: 11 * i + 11, speech: 11, samples }));
  await queue.close();
  assert.equal(rows.map((row) => row.snrDb), audio.map(segmentSnrDb));
  for (const row of rows) assert.is(row.text, row.snrDb! < THRESHOLD_DB ? 'noisy' : 'clean', `${row.snrDb} dB`);
  assert.equal(rows.map((row) => row.text), ['clean', 'noisy', 'noisy', 'noisy'], 'JFK stands 31 dB above his floor clean, less under noise');
});

test('a segment too short for one 20-ms frame has no estimate', async () => {
  const rows: SpeechSegment[] = [];
  const queue = new TranscriptionQueue({ session: SESSION, limit: 10, stt: router, onRow: (row) => rows.push(row), onDropped: () => {} });
  queue.push({ start: 0, end: 0.01, speech: 0.01, samples: new Float32Array(160) });
  await queue.close();
  assert.is(rows[0]!.snrDb, undefined);
});

test.run();

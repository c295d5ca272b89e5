import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import type { SpeechAudio } from '../../actors/voice/analyzer.ts';
import { DEFAULT_BACKGROUND_LEVEL } from '../../actors/voice/background-level.ts';
import { DEFAULT_SPEAKER_LEVEL } from '../../actors/voice/speaker-level.ts';
import { SpeechSegmenter } from '../../actors/voice/segmenter.ts';
import { jfkPcm, pcmToFloat } from '../../ops/support/voice-media.ts';
import { VoiceActivityModel } from '../../actors/voice/vad.ts';
import { VoiceStreams } from '../../actors/voice/voice-streams.ts';
import { readConfig } from '../../bus/config.ts';

const model = await VoiceActivityModel.load(readConfig().modelsDir);

const RATE = 16000;
const WINDOW = 0.02 * RATE;
const TOLERANCE = 0.3;

/** Energy check behind the ground truth: 20 ms windows above -30 dBFS are speech (the recording's
 * pauses sit near -40 dBFS, its words well above -25). */
function speechWindows(samples: Float32Array): boolean[] {
  const loud: boolean[] = [];
  for (let at = 0; at + WINDOW <= samples.length; at += WINDOW) {
    let power = 0;
    for (let i = at; i < at + WINDOW; i++) power += samples[i]! ** 2;
    loud.push(10 * Math.log10(power / WINDOW + 1e-12) > -30);
  }
  return loud;
}

/** Sample ranges of speech separated by pauses of at least `minPause` seconds. */
function phrases(samples: Float32Array, minPause: number): Array<[number, number]> {
  const loud = speechWindows(samples);
  const result: Array<[number, number]> = [];
  let quiet = Infinity;
  loud.forEach((isLoud, index) => {
    if (!isLoud) return void quiet++;
    const last = result[result.length - 1];
    if (last && quiet * WINDOW < minPause * RATE) last[1] = (index + 1) * WINDOW;
    else result.push([index * WINDOW, (index + 1) * WINDOW]);
    quiet = 0;
  });
  return result;
}

test('segments start and end where the speech does, around inserted silences', async () => {
  const jfk = await jfkPcm();
  // Cut the speech at its long pauses and put the phrases back together with 2 s of silence between.
  const parts = phrases(pcmToFloat(jfk), 0.7);
  assert.ok(parts.length >= 3, `expected several phrases, got ${parts.length}`);
  const silence = Buffer.alloc(2 * RATE * 2);
  const pieces: Buffer[] = [silence];
  const truth: Array<[number, number]> = [];
  let at = silence.length / 2;
  for (const [start, end] of parts) {
    pieces.push(jfk.subarray(2 * start, 2 * end), silence);
    truth.push([at / RATE, (at + end - start) / RATE]);
    at += end - start + silence.length / 2;
  }

  const segments: SpeechAudio[] = [];
  const streams = new VoiceStreams({ model, maxBacklogSamples: Infinity, onShed: () => {}, onFailed: () => {} });
  const stream = streams.open({ session: '0123456789abcdef01234567', startOffset: 0, onSecond: () => {}, onSegment: (s) => segments.push(s) });
  streams.write(stream, Buffer.concat(pieces));
  await streams.close(stream);

  for (const [start, end] of truth) {
    const overlapping = segments.filter((segment) => segment.end > start && segment.start < end);
    const label = `phrase ${start.toFixed(2)}-${end.toFixed(2)} s, segments ${segments.map((s) => `${s.start.toFixed(2)}-${s.end.toFixed(2)}`).join(' ')}`;
    assert.ok(overlapping.length > 0, `${label}: not detected`);
    assert.ok(Math.abs(overlapping[0]!.start - start) <= TOLERANCE, `${label}: start`);
    assert.ok(Math.abs(overlapping[overlapping.length - 1]!.end - end) <= TOLERANCE, `${label}: end`);
  }
  for (const segment of segments) {
    assert.is(truth.filter(([start, end]) => segment.end > start && segment.start < end).length, 1, 'no segment bridges an inserted silence');
    assert.is(segment.samples.length, Math.round((segment.end - segment.start) * RATE));
  }
});

test('segmenter: hysteresis, minimum length, long pauses, and the maximum-length split', () => {
  const step = 512;
  const run = (probabilities: number[]) => {
    const segmenter = new SpeechSegmenter({
      startThreshold: 0.5, endThreshold: 0.35, endSilence: 8 * step, longLength: 20 * step, longEndSilence: 3 * step, crowdEndSilence: 3 * step, background: DEFAULT_BACKGROUND_LEVEL, speaker: DEFAULT_SPEAKER_LEVEL, maxLength: 40 * step, minSpeech: 4 * step, padding: 0,
    });
    const spans = probabilities.map((p, i) => segmenter.step(p, i * step, (i + 1) * step)).filter((span) => span !== undefined);
    const last = segmenter.finish(probabilities.length * step);
    return (last ? [...spans, last] : spans).map(({ start, end }) => [start / step, end / step]);
  };
  const quiet = (n: number) => Array<number>(n).fill(0.1);
  // A dip to 0.4 does not end speech; 0.4 alone does not start it.
  assert.equal(run([...quiet(3), 0.9, 0.9, 0.4, 0.4, 0.9, 0.9, ...quiet(10)]), [[3, 9]]);
  assert.equal(run([...quiet(3), 0.4, 0.4, 0.4, 0.4, 0.4, ...quiet(10)]), []);
  // A click shorter than the minimum speech is dropped.
  assert.equal(run([...quiet(3), 0.9, 0.9, ...quiet(10)]), []);
  // A short segment survives a pause shorter than endSilence; a long one ends at a short pause.
  const speech = (n: number) => Array<number>(n).fill(0.9);
  assert.equal(run([...speech(5), ...quiet(6), ...speech(5), ...quiet(10)]), [[0, 16]]);
  assert.equal(run([...speech(20), ...quiet(4), ...speech(5), ...quiet(10)]), [[0, 20], [24, 29]]);
  // Speech longer than the maximum is cut into consecutive segments; the stream's end closes the last.
  assert.equal(run(Array<number>(90).fill(0.9)), [[0, 40], [40, 80], [80, 90]]);
});

test('segmenter property: segments in order, apart, no longer than the maximum, and only a long enough pause ends one', () => {
  const options = { startThreshold: 0.5, endThreshold: 0.35, endSilence: 8, longLength: 20, longEndSilence: 3, crowdEndSilence: 3, background: DEFAULT_BACKGROUND_LEVEL, speaker: DEFAULT_SPEAKER_LEVEL, maxLength: 40, minSpeech: 4, padding: 0 };
  // Runs of speech, dips and silence, one sample a step.
  const steps = fc
    .array(fc.tuple(fc.constantFrom(0.1, 0.4, 0.9), fc.integer({ min: 1, max: 12 })), { maxLength: 40 })
    .map((runs) => runs.flatMap(([probability, length]) => Array<number>(length).fill(probability)));
  fc.assert(
    fc.property(steps, (probabilities) => {
      const segmenter = new SpeechSegmenter(options);
      const spans = probabilities.map((p, i) => segmenter.step(p, i, i + 1)).filter((span) => span !== undefined);
      const last = segmenter.finish(probabilities.length);
      if (last) spans.push(last);
      spans.forEach((span, i) => {
        assert.ok(span.start >= 0 && span.end <= probabilities.length && span.end > span.start && span.end - span.start <= options.maxLength);
        const next = spans[i + 1];
        if (!next) return;
        const cutAtMaximum = next.start === span.end && span.end - span.start === options.maxLength;
        const pause = span.end - span.start >= options.longLength ? options.longEndSilence : options.endSilence;
        assert.ok(cutAtMaximum || next.start - span.end >= pause, JSON.stringify({ spans, probabilities }));
      });
    }),
    { numRuns: 2000 },
  );
});

test.run();

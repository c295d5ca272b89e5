// The periodic channels of the WebSocket API fold a period's live rows into one payload.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { EMOTION_KEYS, type AudioSecond, type CustomEvent, type EmotionKey, type FaceSecond, type SpeechSegment } from '../../bus/contracts/rows.ts';
import { MAX_ITEMS_PER_MESSAGE, createAggregator } from '../../gateway/ws/aggregators.ts';

const session = '65f0c0de0123456789abcdef';

function face(second: number, track: number, dominant: EmotionKey, strength = 0.7): FaceSecond {
  const rest = (1 - strength) / (EMOTION_KEYS.length - 1);
  const probabilities = EMOTION_KEYS.map((key) => (key === dominant ? strength : rest));
  return { session, second, track, probabilities, dominant, frames: 4 };
}

const audio = (second: number, frequency: number, intensity: number): AudioSecond =>
  ({ session, second, frequency, intensity, voiced: frequency > 0 ? 1 : 0, speech: 0 });

test('emotion counts: face-seconds per dominant emotion, distinct tracks, the seconds covered', () => {
  const counts = createAggregator('session_emotions_counts');
  assert.is(counts.flush(), undefined, 'no rows, nothing to send');
  counts.add([face(10, 1, 'exaltation'), face(10, 2, 'focus')]);
  counts.add([face(11, 1, 'exaltation'), face(12, 1, 'exaltation')]);
  const payload = counts.flush() as any;
  assert.equal(payload, {
    from: 10,
    to: 13,
    faceSeconds: 4,
    tracks: 2,
    emotions: { focus: 1, exaltation: 3, lowEnergy: 0, seriousness: 0, overwhelming: 0, aversion: 0, impact: 0 },
  });
  assert.is(counts.flush(), undefined, 'each period starts empty');
  counts.add([face(20, 3, 'impact')]);
  const next = counts.flush() as any;
  assert.equal([next.from, next.to, next.tracks, next.emotions.impact, next.emotions.exaltation], [20, 21, 1, 1, 0]);
});

test('emotion intensities: mean probability of every emotion over the face-seconds', () => {
  const intensities = createAggregator('session_emotions_intensities');
  intensities.add([face(5, 1, 'exaltation', 0.9), face(5, 2, 'lowEnergy', 0.5)]);
  const payload = intensities.flush() as any;
  assert.is(payload.faceSeconds, 2);
  const low = (1 - 0.9) / 6;
  const lowSad = (1 - 0.5) / 6;
  const near = (actual: number, expected: number) => assert.ok(Math.abs(actual - expected) < 1e-4, `${actual} vs ${expected}`);
  near(payload.emotions.exaltation, (0.9 + lowSad) / 2);
  near(payload.emotions.lowEnergy, (low + 0.5) / 2);
  near(payload.emotions.focus, (low + lowSad) / 2);
  assert.equal(Object.keys(payload.emotions), [...EMOTION_KEYS]);
});

test('audio features: mean frequency over voiced seconds, intensity as a power mean in dBFS', () => {
  const features = createAggregator('session_audio_features');
  features.add([audio(0, 200, -20), audio(1, 0, -40), audio(2, 300, -20)]);
  const payload = features.flush() as any;
  assert.is(payload.frequency, 250);
  assert.equal([payload.seconds, payload.voicedSeconds, payload.from, payload.to], [3, 2, 0, 3]);
  const power = (2 * 10 ** -2 + 10 ** -4) / 3;
  assert.ok(Math.abs(payload.intensity - 10 * Math.log10(power)) < 0.01, String(payload.intensity));
  assert.ok(payload.intensity > -22 && payload.intensity < -21, 'louder seconds dominate a power mean');

  features.add([audio(3, 0, -100)]);
  assert.equal(features.flush(), { from: 3, to: 4, seconds: 1, voicedSeconds: 0, frequency: 0, intensity: -100, speechSeconds: 0 });
});

test('audio features: pitch variability and pause ratio from the period\'s sums, absent where undefined', () => {
  const features = createAggregator('session_audio_features');
  // Semitones 0, 2 in second 7 and 4, 6 in second 8: deviation sqrt(5) over both, 1 in each.
  const prosody = (second: number, tones: number[], speech?: [number, number, number]): AudioSecond => ({
    ...audio(second, 150, -20),
    voicedFrames: tones.length,
    semitoneSum: tones.reduce((a, b) => a + b, 0),
    semitoneSquares: tones.reduce((a, b) => a + b * b, 0),
    speechSeconds: speech?.[0] ?? 0,
    ...(speech ? { speechStart: speech[1], speechEnd: speech[2] } : {}),
  });
  features.add([prosody(7, [0, 2], [0.4, 7.2, 7.8]), prosody(8, [4, 6], [0.5, 8.0, 8.9])]);
  const payload = features.flush() as any;
  assert.is(payload.pitchVariability, Math.round(100 * Math.sqrt(5)) / 100);
  // 0.9 s of speech from 7.2 to 8.9.
  assert.is(payload.pauseRatio, Math.round(10000 * (1 - 0.9 / 1.7)) / 10000);
  assert.is(payload.speechSeconds, 0.9);
  // Rows of older publishers carry no sums: nothing to say about either.
  features.add([audio(9, 150, -20), prosody(10, [3])]);
  const bare = features.flush() as any;
  assert.ok(!('pitchVariability' in bare) && !('pauseRatio' in bare), JSON.stringify(bare));
});

test('transcription and custom events: items in arrival order, without internal fields', () => {
  const transcription = createAggregator('session_transcription');
  const segment: SpeechSegment = { session, start: 1.2, end: 2.5, text: 'hello there', positive: 0.6, neutral: 0.4, negative: 0, compound: 0.4 };
  transcription.add([segment]);
  transcription.add([{ ...segment, start: 3, end: 4, text: 'bye' }]);
  const segments = (transcription.flush() as any).segments;
  assert.equal(segments.map((s: any) => s.text), ['hello there', 'bye']);
  assert.is(segments[0].session, undefined);

  const events = createAggregator('session_custom_events');
  const event: CustomEvent = { id: 'abc', session, source: 'src', user: 'u', type: 'sensor_report', time: 4, data: 1.5 };
  events.add([event, { ...event, id: 'def', time: 5, data: 'text' }]);
  assert.equal((events.flush() as any).events, [
    { session, source: 'src', user: 'u', type: 'sensor_report', time: 4, data: 1.5 },
    { session, source: 'src', user: 'u', type: 'sensor_report', time: 5, data: 'text' },
  ]);
});

test('lists ask to be sent early once they hold a full message', () => {
  const events = createAggregator('session_custom_events');
  const event: CustomEvent = { id: 'a', session, source: 's', user: 'u', type: 'sensor_report', time: 0, data: 0 };
  events.add(Array.from({ length: MAX_ITEMS_PER_MESSAGE - 1 }, (_, i) => ({ ...event, time: i })));
  assert.is(events.full, false);
  events.add([event]);
  assert.is(events.full, true);
  assert.is((events.flush() as any).events.length, MAX_ITEMS_PER_MESSAGE);
  assert.is(events.full, false);
});

test('malformed messages and rows are skipped', () => {
  const counts = createAggregator('session_emotions_counts');
  counts.add({ not: 'an array' });
  counts.add([null, 3, { ...face(1, 1, 'focus'), dominant: 'joy' }, { ...face(1, 1, 'focus'), probabilities: [1] }]);
  assert.is(counts.flush(), undefined);
  counts.add([{ second: 1 }, face(2, 1, 'aversion')]);
  assert.is((counts.flush() as any).emotions.aversion, 1);
});

test.run();

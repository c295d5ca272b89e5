// The timeline arithmetic on hand-made rows, computed by the real queries in ClickHouse.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { readConfig } from '../../bus/config.ts';
import { EMOTION_KEYS, type EmotionKey } from '../../bus/contracts/rows.ts';
import { newSessionId } from '../../bus/ids.ts';
import type { ClickHouseClient } from '../../storage/clickhouse/clickhouse.ts';
import { columnsOf } from '../../storage/schema/tables.ts';
import {
  audioFeatures,
  emotionTotals,
  emotionsTimeline,
  intervalOf,
  sentimentTimeline,
} from '../../storage/results/timelines.ts';
import { migratedDatabase } from '../support/migrated.ts';

const config = readConfig();

let clickhouse: ClickHouseClient;
const session = newSessionId();

/** Probabilities in EMOTION_KEYS order with `p` on `key` and the rest spread evenly. */
function probabilities(key: EmotionKey, p: number): number[] {
  return EMOTION_KEYS.map((k) => (k === key ? p : (1 - p) / 6));
}

async function insert(kind: 'audio' | 'face' | 'video' | 'speech', rows: object[]): Promise<void> {
  const table = { audio: 'audio_seconds', face: 'face_seconds', video: 'video_seconds', speech: 'speech_segments' }[kind];
  await clickhouse.insert({ table, values: rows.map((row) => columnsOf(kind, row)), format: 'JSONEachRow' });
}

test.before(async () => {
  clickhouse = await migratedDatabase(config);
  // Seconds 0-9 analysed; faces: track 1 happy in 0-5, track 2 sad in 2-3 and surprised in 6;
  // seconds 7-9 video without faces; nothing at all from 10 to 19; audio in 20-24.
  // Faces read with reduced effort in 6, 8 and 9; 0-5 from a publisher older than the field.
  const effort: Record<number, number> = { 6: 1, 7: 0, 8: 1, 9: 2 };
  const video = (second: number) => ({ session, second, frames: 4, faces: 0, dropped: 0, ...(second in effort && { effort: effort[second] }) });
  await insert('video', Array.from({ length: 10 }, (_, second) => video(second)));
  await insert('video', [video(9)]);
  const face = (second: number, track: number, key: EmotionKey, p: number) => ({
    session, second, track, probabilities: probabilities(key, p), dominant: key, frames: 4,
  });
  await insert('face', [
    ...[0, 1, 2, 3, 4, 5].map((s) => face(s, 1, 'exaltation', 0.9)),
    face(2, 2, 'lowEnergy', 0.6),
    face(3, 2, 'lowEnergy', 0.8),
    face(6, 2, 'impact', 0.7),
  ]);
  // A batch written twice (a redelivery) must not count twice.
  await insert('face', [face(0, 1, 'exaltation', 0.9)]);
  // Prosody sums: semitones 0, 2 at 20; 4, 6 at 22; 8 at 23. Speech 20.2-20.9 (0.5 s of it),
  // 22.0-22.8 (0.6 s), 23.1-23.5 (0.4 s).
  const tones = (values: number[]) => ({
    voicedFrames: values.length, semitoneSum: values.reduce((a, b) => a + b, 0), semitoneSquares: values.reduce((a, b) => a + b * b, 0),
  });
  const speaking = (seconds: number, start: number, end: number) => ({ speechSeconds: seconds, speechStart: start, speechEnd: end });
  await insert('audio', [
    { session, second: 20, frequency: 200, intensity: -20, voiced: 1, speech: 1, ...tones([0, 2]), ...speaking(0.5, 20.2, 20.9) },
    { session, second: 21, frequency: 0, intensity: -100, voiced: 0, speech: 0, ...tones([]), speechSeconds: 0 },
    { session, second: 22, frequency: 400, intensity: -20, voiced: 1, speech: 1, ...tones([4, 6]), ...speaking(0.6, 22.0, 22.8) },
    { session, second: 23, frequency: 300, intensity: -30, voiced: 1, speech: 1, ...tones([8]), ...speaking(0.4, 23.1, 23.5) },
    // A row of an older publisher, without prosody: it adds nothing to the sums.
    { session, second: 24, frequency: 0, intensity: -100, voiced: 0, speech: 0 },
  ]);
  const segment = (start: number, positive: number, negative: number) => ({
    session, start, end: start + 1.5, text: 'words', positive, neutral: 1 - positive - negative, negative, compound: positive - negative,
  });
  await insert('speech', [
    segment(1.2, 0.6, 0), segment(3.9, 0.2, 0.2), segment(12.5, 0, 0.5),
    // Nine words over 20.5-23.5.
    { ...segment(20.5, 0, 0), end: 23.5, text: 'One, two, three - four five six seven eight nine.' },
  ]);
});

test.after(async () => {
  await clickhouse?.close();
});

test('intervals: [start + k*g, start + (k+1)*g), the last one cut at end', () => {
  const window = { session, granularity: 5, start: 2, end: 13 };
  assert.equal(intervalOf(window, 0), { start: 2, end: 7 });
  assert.equal(intervalOf(window, 2), { start: 12, end: 13 });
});

test('emotions: detectedFaces, people, quantity and intensity per interval', async () => {
  const timeline = await emotionsTimeline(clickhouse, { session, granularity: 5, start: 0, end: 25 });
  assert.equal(timeline.map((e) => [e.start, e.end, e.detectedFaces]), [[0, 5, 2], [5, 10, 2]]);
  const [first, second] = timeline;
  // 0-4: track 1 happy five times, track 2 sad twice: 7 face-seconds.
  assert.equal(first!.emotions.exaltation, { people: 1, quantity: 0.7143, intensity: 0.9 });
  assert.equal(first!.emotions.lowEnergy, { people: 1, quantity: 0.2857, intensity: 0.7 });
  assert.equal(first!.emotions.focus, { people: 0, quantity: 0, intensity: 0 });
  assert.equal(Object.keys(first!.emotions).sort(), [...EMOTION_KEYS].sort());
  // 5-9: track 1 happy at 5, track 2 surprised at 6; 7-9 analysed without faces.
  assert.equal(second!.emotions.impact, { people: 1, quantity: 0.5, intensity: 0.7 });
  assert.equal(second!.emotions.exaltation, { people: 1, quantity: 0.5, intensity: 0.9 });
});

test('emotions: reducedEffortSeconds counts the analysed seconds read with reduced effort, absent where there were none', async () => {
  const timeline = await emotionsTimeline(clickhouse, { session, granularity: 5, start: 0, end: 25 });
  assert.equal(timeline.map((e) => [e.start, e.reducedEffortSeconds]), [[0, undefined], [5, 3]]);
  assert.not.ok('reducedEffortSeconds' in timeline[0]!, 'an interval at full effort keeps the spec\'s fields');
  const fine = await emotionsTimeline(clickhouse, { session, granularity: 3, start: 6, end: 12 });
  assert.equal(fine.map((e) => [e.start, e.reducedEffortSeconds]), [[6, 2], [9, 1]], 'the row of second 9 stored twice counts once');
});

test('emotions: an interval with video and no face is zeros; one without video is omitted', async () => {
  const timeline = await emotionsTimeline(clickhouse, { session, granularity: 3, start: 7, end: 16 });
  assert.equal(timeline.length, 1, 'seconds 10-15 had no video');
  assert.equal(timeline[0]!.start, 7);
  assert.is(timeline[0]!.detectedFaces, 0);
  for (const key of EMOTION_KEYS) assert.equal(timeline[0]!.emotions[key], { people: 0, quantity: 0, intensity: 0 });
});

test('emotion totals count face-seconds by their dominant emotion', async () => {
  const totals = await emotionTotals(clickhouse, session);
  assert.equal(totals, { focus: 0, exaltation: 6, lowEnergy: 2, seriousness: 0, overwhelming: 0, aversion: 0, impact: 1 });
});

test('audio: frequency over voiced seconds, intensity as a power mean, silent intervals omitted', async () => {
  const timeline = await audioFeatures(clickhouse, { session, granularity: 5, start: 0, end: 40 });
  assert.is(timeline.length, 1);
  const [entry] = timeline;
  assert.equal([entry!.start, entry!.end], [20, 25]);
  assert.is(entry!.frequency, 300);
  // Power mean of -20, -100, -20, -30, -100 dBFS.
  const expected = 10 * Math.log10((2 * 10 ** -2 + 10 ** -3 + 2 * 10 ** -10) / 5);
  assert.ok(Math.abs(entry!.intensity - expected) < 0.01, `${entry!.intensity} vs ${expected}`);
});

test('audio prosody: exact from the seconds\' sums, words shared by overlap, absent where undefined', async () => {
  const [entry] = await audioFeatures(clickhouse, { session, granularity: 5, start: 0, end: 40 });
  // Semitones 0, 2, 4, 6, 8: deviation sqrt(8), not the mean of the seconds' deviations (1).
  assert.is(entry!.pitchVariability, 2.83);
  // 1.5 s of speech from 20.2 to 23.5; nine words over it.
  assert.is(entry!.pauseRatio, Math.round(10000 * (1 - 1.5 / 3.3)) / 10000);
  assert.is(entry!.speakingRate, 360);
  // From 22: semitones 4, 6, 8; speech 1.0 s from 22.0 to 23.5; half the segment (4.5 words) lies in it.
  const [later] = await audioFeatures(clickhouse, { session, granularity: 5, start: 22, end: 40 });
  assert.equal([later!.start, later!.end, later!.pitchVariability, later!.pauseRatio, later!.speakingRate], [22, 27, 1.63, 0.3333, 270]);
  // Second 21 alone: no voiced frame, no speech, a segment over it: nothing defined.
  const [quiet] = await audioFeatures(clickhouse, { session, granularity: 5, start: 21, end: 22 });
  assert.equal(quiet, { start: 21, end: 22, frequency: 0, intensity: -100 });
  // Second 23 alone: one voiced frame, speech with no pause, the segment's last half second (1.5 words in 0.4 s).
  const [one] = await audioFeatures(clickhouse, { session, granularity: 5, start: 23, end: 24 });
  assert.equal([one!.pitchVariability, one!.pauseRatio, one!.speakingRate], [undefined, 0, 225]);
});

test('sentiment: segments counted where they start, scores averaged', async () => {
  const timeline = await sentimentTimeline(clickhouse, { session, granularity: 10, start: 0, end: 20 });
  assert.equal(timeline.map((e) => [e.start, e.end, e.segments]), [[0, 10, 2], [10, 20, 1]]);
  assert.equal(timeline[0]!.sentiments, { positive: 0.4, neutral: 0.5, negative: 0.1 });
  assert.equal(timeline[1]!.sentiments, { positive: 0, neutral: 0.5, negative: 0.5 });
  // A window starting after a segment's start leaves it out.
  const later = await sentimentTimeline(clickhouse, { session, granularity: 10, start: 2, end: 20 });
  assert.is(later[0]!.segments, 1);
});

test.run();

// The transcript pipeline end to end: a live RTMP stream of speech -> ingest -> voice activity
// -> Moonshine -> VADER -> rows -> ClickHouse -> GET /audio/transcription and
// /audio/transcription-sentiment.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { readOpsConfig } from '../../ops/ops-config.ts';
import { countWords } from '../../bus/words.ts';
import { waitUntil } from '../../ops/stack/process.ts';
import { WsClient } from '../../ops/support/ws-client.ts';
import { makeClip, speak, type ClipSpec } from '../support/clips.ts';
import { shedAudioSeconds } from '../support/shed-audio.ts';
import { startServices, type Services } from '../../ops/support/services.ts';
import type { RtmpServer } from '../../ops/support/streams/rtmp-server.ts';
import {
  clipsDir,
  mediaSeconds,
  settled,
  startLiveSession,
  startStreamServer,
  stopSession,
  type LiveSession,
} from '../support/analysis.ts';

const tooling = readOpsConfig();

// Sentences whose sentiment words survive espeak and Moonshine.
const POSITIVE = 'What a great and wonderful day. I am so happy.';
const NEGATIVE = 'This is awful. I am sad and angry.';
const PAUSE = 3;
const GRANULARITY = 5;

interface Segment {
  start: number;
  end: number;
  text: string;
  sentiments: { positive: number; neutral: number; negative: number; compound: number };
  snrDb?: number;
}

interface SentimentEntry {
  start: number;
  end: number;
  segments: number;
  sentiments: { positive: number; neutral: number; negative: number };
}

// Whole sentences only: a stream joined mid-sentence gives a clipped first segment.
const isPositive = (segment: Segment) => /wonderful/i.test(segment.text) && /happy/i.test(segment.text);
const isNegative = (segment: Segment) => /awful/i.test(segment.text) && /angry/i.test(segment.text);

let services: Services;
let rtmp: RtmpServer | undefined;
let speech: LiveSession | undefined;
/** From the positive sentence's start to the negative one's, in the clip. */
let positiveToNegative: number;
/** When the session was asked for: its media clock, started later, is at most this far on. */
let requestedAt: number;

test.before(async () => {
  const mediaDir = join(clipsDir, 'speech');
  const [positive, negative] = await Promise.all([speak(POSITIVE, mediaDir), speak(NEGATIVE, mediaDir)]);
  const jfk = join(tooling.mediaDir, 'speech', 'jfk.wav');
  const [positiveSeconds, jfkSeconds, negativeSeconds] = [positive, jfk, negative].map(mediaSeconds) as [number, number, number];
  positiveToNegative = positiveSeconds + PAUSE + jfkSeconds + PAUSE;
  const clip: ClipSpec = {
    width: 640, height: 360, fps: 10,
    seconds: Math.ceil(positiveToNegative + negativeSeconds + PAUSE),
    video: { type: 'color', color: 'black' },
    audio: {
      type: 'wavs',
      parts: [{ wav: positive }, { silence: PAUSE }, { wav: jfk }, { silence: PAUSE }, { wav: negative }, { silence: PAUSE }],
    },
  };
  const file = await makeClip(clip, clipsDir);
  services = await startServices({ name: 'transcript-sentiment' });
  rtmp = await startStreamServer('transcript-sentiment');
  requestedAt = Date.now();
  speech = await startLiveSession(services, rtmp, 'speech', file);
});

test.after(async () => {
  await services?.stop();
  await speech?.publisher.stop();
  await rtmp?.stop();
});

/**
 * The positive sentence, the speech after it and the negative sentence that follows, in one loop
 * that starts at `from` (a media second) or later.
 */
function oneLoop(segments: Segment[], from = 0): { positive: Segment; middle: Segment[]; negative: Segment } | undefined {
  for (const [n, positive] of segments.entries()) {
    if (!isPositive(positive) || positive.start < from) continue;
    const rest = segments.slice(n + 1);
    const k = rest.findIndex(isNegative);
    const negative = rest[k];
    if (negative && !rest.slice(0, k).some(isPositive)) return { positive, middle: rest.slice(0, k), negative };
  }
  return undefined;
}

const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;

test('live: each transcribed utterance carries its words, speech time and speaking rate', async () => {
  const client = await WsClient.connect(`${services.baseUrl.replace('http', 'ws')}/ws/v1`, services.users.alice.token);
  try {
    const subscription = await client.subscribe('session_transcription', `${speech!.id}:1s`);
    // A starved host (the cluster stage) may start the media and transcribe late: the first
    // segment is waited for as long as the next test waits for a whole loop.
    const [, , , payload] = await client.nextEvent(([sub]) => sub === subscription, 100_000);
    // Audio shed by a starved host leaves fragments, and a fragment's few words (the model's
    // guess at half a phrase) make no pace: 4 words in 0.4 s on the cluster stage once.
    const shed = await shedAudioSeconds(services.metrics.hosts.map((metricsUrl) => ({ metricsUrl })));
    if (shed > 0) console.log(`  the host shed ${shed.toFixed(1)} s of audio: the pace of the first segments is not judged`);
    for (const segment of payload.segments) {
      const report = JSON.stringify(segment);
      assert.is(segment.words, countWords(segment.text), report);
      assert.ok(segment.speechSeconds > 0 && segment.speechSeconds <= segment.end - segment.start, report);
      assert.ok(Math.abs(segment.speakingRate - (60 * segment.words) / segment.speechSeconds) < 1e-6, report);
      // espeak-ng at 150 words a minute and JFK's address: a speaker's pace, not a count gone wrong.
      if (shed === 0) assert.ok(segment.words === 0 || (segment.speakingRate > 60 && segment.speakingRate < 400), report);
    }
  } finally {
    client.close();
  }
});

test('speech on a live stream: transcribed segments in order, sentiment of each and per interval', async () => {
  const { id } = speech!;
  const transcriptPath = `/v1/sessions/${id}/audio/transcription?limit=100`;
  // A host starved of CPU (the cluster stage runs beside fault tests) sheds audio its voice
  // analysis is too far behind on, by design: words shed are not transcribed. A loop is judged
  // only when it was heard in full, so one that starts after the last shed the host counted.
  let heardInFullFrom = 0;
  let shedSeconds = 0;
  let watching = true;
  const watchShed = (async () => {
    while (watching) {
      const shed = await shedAudioSeconds(services.metrics.hosts.map((metricsUrl) => ({ metricsUrl })));
      if (shed > shedSeconds) [shedSeconds, heardInFullFrom] = [shed, (Date.now() - requestedAt) / 1000];
      await sleep(250);
    }
  })();
  try {
    // Until one whole loop, positive sentence to negative sentence, has been transcribed.
    await settled<{ data: Segment[] }>(services, transcriptPath, (body) => oneLoop(body.data, heardInFullFrom) !== undefined, 100_000);
  } finally {
    watching = false;
    await watchShed;
  }
  if (shedSeconds > 0) console.log(`  the host shed ${shedSeconds.toFixed(1)} s of audio; loops before media second ${heardInFullFrom.toFixed(1)} are not judged`);
  await stopSession(services, id);
  // The last segment is transcribed after the stop, and may be stored after a read: the
  // transcript and its sentiment timeline are read until they hold the same segments.
  const timelinePath = `/v1/sessions/${id}/audio/transcription-sentiment?granularity=${GRANULARITY}`;
  let segments: Segment[] = [];
  let timeline: SentimentEntry[] = [];
  await waitUntil('the transcript and its sentiment timeline to hold the same segments', async () => {
    ({ data: segments } = await settled<{ data: Segment[] }>(services, transcriptPath));
    ({ timeline } = await settled<{ timeline: SentimentEntry[] }>(services, timelinePath));
    const again = (await services.api<{ data: Segment[] }>('GET', transcriptPath)).body.data;
    return again.length === segments.length && timeline.reduce((sum, entry) => sum + entry.segments, 0) === segments.length;
  }, 60_000);
  const report = JSON.stringify(segments.map((s) => [s.start, s.end, s.text, s.sentiments.compound]));

  for (const [n, segment] of segments.entries()) {
    assert.ok(segment.text.trim().length > 0, report);
    // How noisy its audio was, as the noise routing estimated it: clean TTS stands far above its floor.
    assert.ok(segment.snrDb! > 20, `segment ${n}: snrDb ${segment.snrDb}`);
    assert.ok(segment.end > segment.start, report);
    if (n > 0) assert.ok(segment.start >= segments[n - 1]!.end, `segments in time order, apart: ${report}`);
    const { positive, neutral, negative } = segment.sentiments;
    assert.ok(Math.abs(positive + neutral + negative - 1) < 0.01, report);
  }

  const loop = oneLoop(segments, heardInFullFrom);
  assert.ok(loop, report);
  const { positive, middle, negative } = loop;
  const spoken = middle.map((segment) => segment.text).join(' ').toLowerCase();
  assert.ok(spoken.includes('country') && spoken.includes('fellow'), `the JFK sample between the sentences: ${report}`);
  // JFK pauses about a second after "Americans" and after "ask not": neither pause ends a
  // segment, so "ask not" is heard in its context (alone it was written "As not.").
  assert.ok(middle.some((segment) => /fellow america\w*,? ask not,? what your country/i.test(segment.text)), `"ask not" in its sentence: ${report}`);
  assert.ok(positive.sentiments.positive > positive.sentiments.negative && positive.sentiments.compound > 0.5, report);
  assert.ok(negative.sentiments.negative > negative.sentiments.positive && negative.sentiments.compound < -0.5, report);
  // Segment times follow the clip: the sentences are as far apart as in it.
  assert.ok(Math.abs(negative.start - positive.start - positiveToNegative) < 1.5, `${positiveToNegative} s apart in the clip: ${report}`);

  // Each interval: the segments that start in it, and the mean of their scores.
  const starting = (entry: SentimentEntry) => segments.filter((s) => s.start >= entry.start && s.start < entry.end);
  const expectedIntervals = new Set(segments.map((s) => Math.floor(s.start / GRANULARITY)));
  assert.is(timeline.length, expectedIntervals.size, JSON.stringify({ timeline, segments: report }));
  for (const entry of timeline) {
    const inside = starting(entry);
    assert.is(entry.segments, inside.length, JSON.stringify(entry));
    for (const key of ['positive', 'neutral', 'negative'] as const) {
      assert.ok(Math.abs(entry.sentiments[key] - mean(inside.map((s) => s.sentiments[key]))) < 0.001, JSON.stringify({ entry, inside }));
    }
  }
  const holding = (segment: Segment) => timeline.find((entry) => segment.start >= entry.start && segment.start < entry.end)!;
  const [upbeat, downbeat] = [holding(positive), holding(negative)];
  assert.ok(upbeat.start < downbeat.start, JSON.stringify(timeline));
  assert.ok(upbeat.sentiments.positive > upbeat.sentiments.negative, JSON.stringify(upbeat));
  assert.ok(downbeat.sentiments.negative > downbeat.sentiments.positive, JSON.stringify(downbeat));
});

test('speech prosody through ClickHouse and the API: speaking rate, pauses and pitch movement of the whole session', async () => {
  const { timeline } = await settled<{ timeline: Array<Record<string, number>> }>(services, `/v1/sessions/${speech!.id}/audio/features?granularity=3600`);
  assert.is(timeline.length, 1, JSON.stringify(timeline));
  const [whole] = timeline;
  const report = JSON.stringify(whole);
  // Two sentences at 150 words a minute and JFK's address, in loops with 3 s silences between
  // them; two voices apart in pitch, so the deviation is wide, but under an octave.
  assert.ok(whole!.speakingRate! > 90 && whole!.speakingRate! < 260, report);
  assert.ok(whole!.pauseRatio! > 0.15 && whole!.pauseRatio! < 0.8, report);
  assert.ok(whole!.pitchVariability! > 1 && whole!.pitchVariability! < 12, report);
});

test.run();

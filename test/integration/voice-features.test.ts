// The voice pipeline end to end: live RTMP streams -> ingest -> voice actor -> rows ->
// ClickHouse -> GET /audio/features, checked against tones whose pitch and level are known.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { makeClip, type ClipSpec } from '../support/clips.ts';
import { waitUntil } from '../../ops/stack/process.ts';
import { startServices, type Services } from '../../ops/support/services.ts';
import type { RtmpServer } from '../../ops/support/streams/rtmp-server.ts';
import {
  clipsDir,
  runFor,
  settled,
  sineDbfs,
  startLiveSession,
  startStreamServer,
  stopSession,
  toneOf,
  toneSpans,
  type AudioEntry,
  type LiveSession,
} from '../support/analysis.ts';

const LOW_HZ = 200;
const HIGH_HZ = 400;
const TONES = [LOW_HZ, HIGH_HZ] as const;
const PHASE_SECONDS = 10;
/** Long enough for at least three whole tone phases whatever the loop's phase. */
const RUN_SECONDS = 46;

const toneClip: ClipSpec = {
  width: 640, height: 360, seconds: 2 * PHASE_SECONDS, fps: 10,
  video: { type: 'color', color: 'darkslategray' },
  audio: { type: 'tones', tones: [{ hz: LOW_HZ, seconds: PHASE_SECONDS }, { hz: HIGH_HZ, seconds: PHASE_SECONDS }] },
};
const muteClip: ClipSpec = {
  width: 640, height: 360, seconds: 10, fps: 10,
  video: { type: 'color', color: 'teal' },
  audio: { type: 'none' },
};

let services: Services;
let rtmp: RtmpServer | undefined;
const live: LiveSession[] = [];
let tone: LiveSession;
let mute: LiveSession;

test.before(async () => {
  const [toneFile, muteFile] = await Promise.all([makeClip(toneClip, clipsDir), makeClip(muteClip, clipsDir)]);
  services = await startServices({ name: 'voice-features' });
  rtmp = await startStreamServer('voice-features');
  const server = rtmp;
  [tone, mute] = await Promise.all([
    startLiveSession(services, server, 'tones', toneFile),
    startLiveSession(services, server, 'mute', muteFile),
  ]);
  live.push(tone, mute);
});

test.after(async () => {
  await services?.stop();
  await Promise.all(live.map((session) => session.publisher.stop()));
  await rtmp?.stop();
});

test('a stream without audio: no audio timeline and no error, while its video is analysed', async () => {
  // Video intervals prove the session is analysing; audio must still be empty then. (The live
  // timeline grows while it is read, so this waits for it to have grown, not to settle.)
  let timeline: unknown;
  await waitUntil('two video intervals stored', async () => {
    const reply = await services.api('GET', `/v1/sessions/${mute.id}/emotions/timeline?granularity=5`);
    timeline = reply.body;
    return reply.status === 200 && reply.body.timeline.length >= 2;
  }, 90_000).catch((error: Error) => assert.unreachable(`${error.message}; last: ${JSON.stringify(timeline)?.slice(0, 500)}`));
  const reply = await services.api('GET', `/v1/sessions/${mute.id}/audio/features?granularity=5`);
  assert.is(reply.status, 200, JSON.stringify(reply.body));
  assert.equal(reply.body, { session: mute.id, timeline: [] });
  const session = await services.api('GET', `/v1/sessions/${mute.id}`);
  assert.is(session.body.meta.workerState, 'working');
  await stopSession(services, mute.id);
});

test('a looped 200 Hz / 400 Hz tone stream: pitch within 3% per phase, level as generated', async () => {
  await runFor(services, tone.id, RUN_SECONDS);
  const finished = await stopSession(services, tone.id);
  const end = Math.ceil(finished.duration);
  const { timeline } = await settled<{ timeline: AudioEntry[] }>(
    services,
    `/v1/sessions/${tone.id}/audio/features?granularity=5`,
    (body) => (body.timeline.at(-1)?.end ?? 0) > end - 5,
  );

  // Audio arrives with the video, and from then on every interval is there. (A session's
  // seconds count from its creation: on a starved machine its media may start seconds later.)
  const first = timeline[0]?.start ?? Infinity;
  const video = (await services.api<{ timeline: { start: number }[] }>('GET', `/v1/sessions/${tone.id}/emotions/timeline?granularity=5`)).body.timeline;
  assert.ok(video.length > 0, 'the video timeline, which the audio is judged against');
  const videoFirst = video[0]!.start;
  if (videoFirst > 5) console.log(`  media arrived ${videoFirst}-${videoFirst + 5} s after the session was created`);
  assert.ok(first <= videoFirst + 5, `first interval, the video's at ${videoFirst}: ${JSON.stringify(timeline)}`);
  for (const [n, entry] of timeline.entries()) {
    assert.is(entry.start, first + n * 5, `interval ${n}: ${JSON.stringify(timeline)}`);
    assert.is(entry.end, Math.min(entry.start + 5, end));
  }

  // The first and last intervals hold the stream's start and end: partial seconds, the audio
  // decoder's first frame. Every interval between them is one tone, or a mix of both around a
  // switch (strictly between them); a 10 s phase fills at most two 5 s intervals, and a mixed
  // interval sits between the two tones. Where the switches fall depends on when the session
  // joined the loop: inside intervals, every other interval is mixed.
  const labels = timeline.map((entry) => toneOf(entry.frequency, TONES) ?? 'mixed');
  const report = JSON.stringify(timeline.map((entry, n) => [entry.start, entry.frequency, entry.intensity, labels[n]]));
  const inner = timeline.slice(1, -1);
  assert.ok(inner.length >= 6, `intervals: ${report}`);
  for (let n = 1; n < timeline.length - 1; n++) {
    const [entry, label] = [timeline[n]!, labels[n]];
    if (label === 'mixed') {
      assert.ok(entry.frequency > LOW_HZ && entry.frequency < HIGH_HZ, `interval ${entry.start} is neither tone nor a mix: ${report}`);
      // Neighbours inside the edges are the two tones.
      const before = n > 1 ? labels[n - 1] : undefined;
      const after = n < timeline.length - 2 ? labels[n + 1] : undefined;
      assert.ok(before !== 'mixed' && after !== 'mixed' && (before === undefined || before !== after), `mix not at a switch: ${report}`);
    } else if (n >= 3) {
      assert.ok(!(labels[n - 1] === label && labels[n - 2] === label), `a tone lasted over 10 s: ${report}`);
    }
  }
  const innerLabels = labels.slice(1, -1);
  assert.ok(innerLabels.includes(LOW_HZ) && innerLabels.includes(HIGH_HZ), `both tones heard: ${report}`);
  assert.ok(innerLabels.filter((label) => label !== 'mixed').length >= Math.floor(inner.length / 2), `at least every other interval one tone: ${report}`);

  // Where each tone played, from windows at every whole-second offset: alternating phases of
  // ten seconds, give or take the second of the other tone that a window may hold and pass.
  const spans = await toneSpans(services, tone.id, TONES, end);
  const spansReport = JSON.stringify(spans);
  assert.ok(spans.length >= 3, `at least three phases: ${spansReport}`);
  for (const [n, span] of spans.entries()) {
    if (n > 0) assert.is.not(span.hz, spans[n - 1]!.hz, `tones alternate: ${spansReport}`);
    // The first and last phases are cut by the stream's start and end.
    if (n === 0 || n === spans.length - 1) continue;
    const length = span.end - span.start;
    assert.ok(length >= PHASE_SECONDS - 2 && length <= PHASE_SECONDS + 2, `phase of ${length} s: ${spansReport}`);
  }
  assert.ok(spans.some((span) => span.hz === LOW_HZ) && spans.some((span) => span.hz === HIGH_HZ), spansReport);

  // Prosody: the two tones are an octave (12 semitones) apart, so an interval holding a share p
  // of the upper one deviates by 12 * sqrt(p * (1 - p)), p read from its mean frequency: about
  // 0 for a pure tone, 1 for a tone with a frame of the other where a switch falls just inside
  // it, 6 for half and half. A tone is not speech, and nothing was transcribed.
  for (const entry of inner) {
    const upper = Math.min(1, Math.max(0, (entry.frequency - LOW_HZ) / (HIGH_HZ - LOW_HZ)));
    const expected = 12 * Math.sqrt(upper * (1 - upper));
    assert.ok(Math.abs(entry.pitchVariability! - expected) <= 0.5, `pitch variability at ${entry.start}, expected ${expected.toFixed(2)}: ${JSON.stringify(entry)}`);
    assert.is(entry.speakingRate, undefined, JSON.stringify(entry));
  }

  // Both tones have the same amplitude, so every interval has the same level.
  const expected = sineDbfs();
  for (const entry of inner) {
    assert.ok(Math.abs(entry.intensity - expected) <= 2, `level at ${entry.start}, expected ${expected.toFixed(2)} dBFS: ${report}`);
  }
});

test.run();

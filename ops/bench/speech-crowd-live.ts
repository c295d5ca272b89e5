// Speech in a crowd through the live path: each condition of speech-crowd.ts (clean, six-talker
// babble at 20, 10 and 5 dB SNR, one competing talker at 10 dB) over one part of the speakers,
// looped into a local RTMP server as an encoder sends it, analysed by a session of the service
// as configured (stream -> ingest -> VAD -> segmenter -> Moonshine). Per condition: the word
// error rate of the best-aligned loop, the segments it took, their SNR estimate, and how long
// after a segment's end its transcript reached a WebSocket listener.
//
//   node --import tsx ops/bench/speech-crowd-live.ts [held-out|tuning]
//
// The held-out part (the default) is the one to report. See ops/bench/README-speech-crowd.md.
import { readOpsConfig } from '../ops-config.ts';
import { WsClient } from '../support/ws-client.ts';
import { CROWD_CONDITIONS, crowdTrack, readPart, type Part } from './lib/crowd-corpus.ts';
import { bestLoop, runSessionsFor, streamTrack, transcript, withLiveSpeechStack, type LiveSegment } from './lib/live-speech.ts';
import { referenceText } from './lib/speech-corpus.ts';
import { SAMPLE_RATE } from './lib/speech.ts';
import { fixed, percentile, printTable } from './lib/stats.ts';

const tooling = readOpsConfig();
const part: Part = process.argv[2] === 'tuning' ? 'tuning' : 'held out';
/** Loops of the track each session sees: whichever loop it joins mid-way, one whole loop follows. */
const LOOPS = 2.3;
/** The WebSocket period the transcripts are pushed at: part of the latency measured. */
const PUSH_PERIOD = '1s';

await withLiveSpeechStack('speech-crowd-live', async (stack) => {
  const corpus = await readPart(tooling.mediaDir, part);
  const reference = referenceText(corpus);
  const loopSeconds = corpus.track.length / SAMPLE_RATE;
  const listener = await WsClient.connect(`${stack.services.baseUrl.replace('http', 'ws')}/ws/v1`, stack.services.users.alice.token);
  stack.onStop(async () => listener.close());
  /** Per session: when it was created (its seconds count from then), and each pushed segment's latency. */
  const sessions: { name: string; id: string; createdAt: number; latencies: number[] }[] = [];
  const bySubscription = new Map<string, (typeof sessions)[number]>();
  listener.onEvent = ([subscription, , , payload], receivedAt) => {
    const session = bySubscription.get(subscription);
    for (const segment of (payload?.segments ?? []) as LiveSegment[]) session?.latencies.push((receivedAt - session.createdAt) / 1000 - segment.end);
  };
  for (const [n, condition] of CROWD_CONDITIONS.entries()) {
    const id = await streamTrack(stack, `crowd-${n}`, await crowdTrack(tooling.mediaDir, corpus, condition));
    const { body } = await stack.services.api('GET', `/v1/sessions/${id}`);
    const session = { name: condition.name, id, createdAt: Date.parse(body.timestamp), latencies: [] };
    sessions.push(session);
    bySubscription.set(await listener.subscribe('session_transcription', `${id}:${PUSH_PERIOD}`), session);
  }
  await runSessionsFor(stack.services, sessions.map((session) => session.id), LOOPS * loopSeconds);
  const rows: string[][] = [];
  for (const { name, id, latencies } of sessions) {
    const segments = await transcript(stack.services, id);
    const loop = bestLoop(reference, segments.map((segment) => segment.text));
    if (process.env.SPEECH_CROWD_TRANSCRIPTS) {
      console.log(`${name}:`);
      for (const segment of segments) console.log(`  ${fixed(segment.start, 1)}-${fixed(segment.end, 1)} s, ${fixed(segment.snrDb ?? NaN, 1)} dB: ${segment.text}`);
    }
    rows.push([
      name,
      fixed(loop.errors / loop.words, 3),
      `${loop.segments} / ${corpus.sentences.length}`,
      fixed(percentile(segments.flatMap((segment) => segment.snrDb ?? []), 50), 1),
      latencies.length ? `${fixed(percentile(latencies, 50), 1)} / ${fixed(Math.max(...latencies), 1)}` : '-',
      loop.text.length > 80 ? `${loop.text.slice(0, 77)}...` : loop.text,
    ]);
  }
  printTable(
    `Speech in a crowd through the live path (${part} speakers, ${corpus.sentences.length} sentences, ${fixed(loopSeconds)} s a loop, best-aligned loop of ${LOOPS} seen)`,
    ['condition', 'WER', 'segments of that loop / sentences', 'segment SNR estimate, median (dB)', `transcript latency after a segment's end, median / max (s, pushed every ${PUSH_PERIOD})`, 'transcript of that loop'],
    rows,
  );
});

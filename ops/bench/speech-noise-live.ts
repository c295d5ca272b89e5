// Speech under noise through the live path: each condition of speech-noise.ts (clean, pink
// noise and music at 20, 10 and 5 dB SNR) encoded as a clip (AAC at 64 kb/s in FLV, as an
// encoder sends it; audio only, so that face analysis of a picture takes no CPU from speech), looped into a local RTMP server, analysed by a session of the service as configured
// (stream -> ingest -> VAD -> Moonshine), and its transcript scored against the read text,
// for each voice (people recorded, espeak-ng) and both.
// The service reads its configuration from this process's environment, so a configuration is
// compared by running this script with and without it. SPEECH_NOISE_LIVE_TRANSCRIPTS=<file> keeps
// every session's transcript there. See ops/bench/README-speech-noise.md.
import { execFile } from 'node:child_process';
import { appendFileSync, writeFileSync, rmSync, mkdirSync } from 'node:fs';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { readConfig } from '../../bus/index.ts';
import { readOpsConfig } from '../ops-config.ts';
import { freePort, startClickHouse, startNats } from '../stack/index.ts';
import { startServices, type Services } from '../support/services.ts';
import { publish, waitForStream } from '../support/streams/publish.ts';
import { startRtmpServer } from '../support/streams/rtmp-server.ts';
import { wordErrors } from '../support/word-error-rate.ts';
import { CONDITIONS, VOICES, conditionName, errorRatePerVoice, mixedTrack, readSpeech, referenceText, type Corpus } from './lib/speech-corpus.ts';
import { SAMPLE_RATE, wavFile } from './lib/speech.ts';
import { fixed, printTable } from './lib/stats.ts';

const config = readConfig();
const tooling = readOpsConfig();
const run = promisify(execFile);
/** Where each session's segments and best-aligned loop are appended as a JSON line, to read its errors. */
const transcriptsFile = process.env.SPEECH_NOISE_LIVE_TRANSCRIPTS;

/** Loops of the clip each session sees: whichever loop it joins mid-way, one whole loop follows. */
const LOOPS = 2.3;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A new session on `streamUri`; waits out the host's admission of a burst of creates (503). */
async function createSession(services: Services, name: string, streamUri: string): Promise<string> {
  for (;;) {
    const created = await services.api('POST', '/v1/sessions', { body: { name, streamUri } });
    if (created.status === 201) return created.body._id;
    if (created.status !== 503) throw new Error(`POST /v1/sessions: ${created.status} ${JSON.stringify(created.body)}`);
    await sleep(2000);
  }
}

/**
 * The errors of the best-aligned loop: the run of consecutive segments that reads most like the
 * whole text. The session joins the looping clip anywhere, so where a loop starts in the
 * transcript is found, not assumed.
 */
function bestLoop(reference: string, texts: string[]): { errors: number; words: number; text: string } {
  let best = { ...wordErrors(reference, ''), text: '' };
  for (let from = 0; from < texts.length; from++) {
    for (let to = from + 1; to <= texts.length; to++) {
      const text = texts.slice(from, to).join(' ');
      const counted = wordErrors(reference, text);
      if (counted.errors < best.errors) best = { ...counted, text };
    }
  }
  return best;
}

/** The text of every segment of the session, in time order, read a page at a time. */
async function transcript(services: Services, id: string): Promise<string[]> {
  const texts: string[] = [];
  for (let more = true; more; ) {
    const reply = await services.api('GET', `/v1/sessions/${id}/audio/transcription?limit=100&offset=${texts.length}`);
    if (reply.status !== 200) throw new Error(`transcript of ${id}: ${reply.status} ${JSON.stringify(reply.body)}`);
    texts.push(...reply.body.data.map((segment: { text: string }) => segment.text));
    more = reply.body.hasMore;
  }
  return texts;
}

const dir = join(config.varDir, 'bench', `speech-noise-live-${process.pid}`);
mkdirSync(dir, { recursive: true });
// What is started is stopped, last first, however far the start got.
const stops: (() => Promise<void>)[] = [];
try {
  const nats = await startNats({ dir: join(dir, 'nats'), port: await freePort() });
  stops.push(() => nats.stop());
  const clickhouse = await startClickHouse({ dir: join(dir, 'clickhouse'), httpPort: await freePort(), tcpPort: await freePort() });
  stops.push(() => clickhouse.stop());
  const rtmpPort = await freePort();
  const rtmp = await startRtmpServer({ dir: join(dir, 'rtmp'), rtmpPort, rtmpsPort: await freePort() });
  stops.push(() => rtmp.stop());
  const services = await startServices({
    name: 'speech-noise-live',
    env: {
      NATS_URL: nats.url,
      CLICKHOUSE_URL: clickhouse.url,
      CLICKHOUSE_DATABASE: 'emotions_bench',
      ALLOW_PRIVATE_STREAM_HOSTS: `127.0.0.1:${rtmpPort}`,
    },
  });
  stops.push(() => services.stop());
  const corpus: Corpus = await readSpeech(tooling.mediaDir, dir);
  const reference = referenceText(corpus);
  const loopSeconds = corpus.track.length / SAMPLE_RATE;
  const sessions: { name: string; id: string }[] = [];
  for (const [n, condition] of CONDITIONS.entries()) {
    const file = join(dir, `condition-${n}.wav`);
    writeFileSync(file, wavFile(mixedTrack(corpus, condition)));
    const clip = join(dir, `condition-${n}.flv`);
    await run('ffmpeg', ['-hide_banner', '-nostdin', '-loglevel', 'error', '-i', file, '-c:a', 'aac', '-b:a', '64k', '-ar', '44100', '-f', 'flv', clip]);
    const streamUri = rtmp.url(`condition-${n}`);
    const publisher = publish(clip, streamUri);
    stops.push(() => publisher.stop());
    await waitForStream(streamUri);
    sessions.push({ name: conditionName(condition), id: await createSession(services, `speech-noise-${n}`, streamUri) });
  }
  const rows: string[][] = [];
  for (const { id } of sessions) {
    await services.waitForSession(id, (session) => session.meta?.mediaSeconds >= LOOPS * loopSeconds, (LOOPS * loopSeconds + 120) * 1000);
    await services.api('POST', `/v1/sessions/${id}/stop`);
  }
  await services.rowsStored();
  for (const { name, id } of sessions) {
    const texts = await transcript(services, id);
    const loop = bestLoop(reference, texts);
    const voices = errorRatePerVoice(corpus, loop.text);
    if (transcriptsFile) appendFileSync(transcriptsFile, `${JSON.stringify({ condition: name, segments: texts, bestLoop: loop.text })}\n`);
    rows.push([
      name,
      String(texts.length),
      ...VOICES.map((voice) => fixed(voices.get(voice)!, 3)),
      fixed(loop.errors / loop.words, 3),
      loop.text.length > 90 ? `${loop.text.slice(0, 87)}...` : loop.text,
    ]);
  }
  printTable(
    `Word error rate through the live path (${corpus.sentences.length} sentences, ${fixed(loopSeconds)} s a loop, best-aligned loop of ${LOOPS} seen)`,
    ['condition', 'segments', ...VOICES.map((voice) => `WER, ${voice}`), 'WER, both', 'transcript of that loop'],
    rows,
  );
} finally {
  for (const stop of stops.reverse()) await stop();
  rmSync(dir, { recursive: true, force: true });
}

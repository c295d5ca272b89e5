// Speech through the live path, for the speech benchmarks: a stack of its own (NATS,
// ClickHouse, an RTMP server and the service as this process's environment configures it),
// tracks looped into it as a stream would bring them, and each session's transcript read back
// and scored against the text read.
import { execFile } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { readConfig } from '../../../bus/index.ts';
import { freePort, startClickHouse, startNats } from '../../stack/index.ts';
import { startServices, type Services } from '../../support/services.ts';
import { publish, waitForStream } from '../../support/streams/publish.ts';
import { startRtmpServer, type RtmpServer } from '../../support/streams/rtmp-server.ts';
import { wordErrors } from '../../support/word-error-rate.ts';
import { wavFile } from './speech.ts';

const run = promisify(execFile);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface LiveSpeechStack {
  services: Services;
  rtmp: RtmpServer;
  dir: string;
  /** Stops what `stop` will, with it: publishers started on the stack. */
  onStop(stop: () => Promise<void>): void;
}

/**
 * Runs `body` on a stack of its own and stops everything started, last first, however far the
 * start got.
 */
export async function withLiveSpeechStack(name: string, body: (stack: LiveSpeechStack) => Promise<void>): Promise<void> {
  const dir = join(readConfig().varDir, 'bench', `${name}-${process.pid}`);
  mkdirSync(dir, { recursive: true });
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
      name,
      env: {
        NATS_URL: nats.url,
        CLICKHOUSE_URL: clickhouse.url,
        CLICKHOUSE_DATABASE: 'emotions_bench',
        ALLOW_PRIVATE_STREAM_HOSTS: `127.0.0.1:${rtmpPort}`,
      },
    });
    stops.push(() => services.stop());
    await body({ services, rtmp, dir, onStop: (stop) => stops.push(stop) });
  } finally {
    for (const stop of stops.reverse()) await stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Loops `samples` (16 kHz mono) into the stack's RTMP server as an encoder sends speech (AAC at
 * 64 kb/s in FLV, audio only, so that no picture's face analysis takes CPU from speech) and
 * opens a session on it; the session's id.
 */
export async function streamTrack(stack: LiveSpeechStack, name: string, samples: Float32Array): Promise<string> {
  const wav = join(stack.dir, `${name}.wav`);
  writeFileSync(wav, wavFile(samples));
  const clip = join(stack.dir, `${name}.flv`);
  await run('ffmpeg', ['-hide_banner', '-nostdin', '-loglevel', 'error', '-i', wav, '-c:a', 'aac', '-b:a', '64k', '-ar', '44100', '-f', 'flv', clip]);
  const streamUri = stack.rtmp.url(name);
  const publisher = publish(clip, streamUri);
  stack.onStop(() => publisher.stop());
  await waitForStream(streamUri);
  return createSession(stack.services, name, streamUri);
}

/** A new session on `streamUri`; waits out the host's admission of a burst of creates (503). */
async function createSession(services: Services, name: string, streamUri: string): Promise<string> {
  for (;;) {
    const created = await services.api('POST', '/v1/sessions', { body: { name, streamUri } });
    if (created.status === 201) return created.body._id;
    if (created.status !== 503) throw new Error(`POST /v1/sessions: ${created.status} ${JSON.stringify(created.body)}`);
    await sleep(2000);
  }
}

/** Waits until every session has received `seconds` of media, then stops them and waits for their rows. */
export async function runSessionsFor(services: Services, ids: string[], seconds: number): Promise<void> {
  for (const id of ids) {
    await services.waitForSession(id, (session) => session.meta?.mediaSeconds >= seconds, (seconds + 120) * 1000);
    await services.api('POST', `/v1/sessions/${id}/stop`);
  }
  await services.rowsStored();
}

export interface LiveSegment {
  start: number;
  end: number;
  text: string;
  snrDb?: number;
}

/** Every segment of the session's transcript, in time order, read a page at a time. */
export async function transcript(services: Services, id: string): Promise<LiveSegment[]> {
  const segments: LiveSegment[] = [];
  for (let more = true; more; ) {
    const reply = await services.api('GET', `/v1/sessions/${id}/audio/transcription?limit=100&offset=${segments.length}`);
    if (reply.status !== 200) throw new Error(`transcript of ${id}: ${reply.status} ${JSON.stringify(reply.body)}`);
    segments.push(...reply.body.data);
    more = reply.body.hasMore;
  }
  return segments;
}

/**
 * The errors of the best-aligned loop: the run of consecutive segments that reads most like the
 * whole text, and how many segments it is. The session joins the looping clip anywhere, so
 * where a loop starts in the transcript is found, not assumed.
 */
export function bestLoop(reference: string, texts: string[]): { errors: number; words: number; text: string; segments: number } {
  let best = { ...wordErrors(reference, ''), text: '', segments: 0 };
  for (let from = 0; from < texts.length; from++) {
    for (let to = from + 1; to <= texts.length; to++) {
      const text = texts.slice(from, to).join(' ');
      const counted = wordErrors(reference, text);
      if (counted.errors < best.errors) best = { ...counted, text, segments: to - from };
    }
  }
  return best;
}

// Live analysis under test: a local RTMP server, clips looped into it as live streams, sessions
// created on them, and results read back once the storage writer has caught up.
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { readConfig } from '../../bus/config.ts';
import { freePort } from '../../ops/stack/ports.ts';
import type { Services } from '../../ops/support/services.ts';
import { publish, waitForStream, type Publisher } from '../../ops/support/streams/publish.ts';
import { startRtmpServer, type RtmpServer } from '../../ops/support/streams/rtmp-server.ts';

export { mediaSeconds } from '../../ops/support/clips.ts';

const config = readConfig();

export const clipsDir = join(config.varDir, 'test', 'clips');

/** The amplitude of ffmpeg's `sine` source, which the clip maker's tones use unchanged. */
export const SINE_AMPLITUDE = 1 / 8;

/** The level in dBFS (power, 0 = full-scale square) of a sine of the given peak amplitude. */
export function sineDbfs(amplitude = SINE_AMPLITUDE): number {
  return 20 * Math.log10(amplitude / Math.SQRT2);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function startStreamServer(name: string): Promise<RtmpServer> {
  const dir = join(config.varDir, 'test', 'streams', `${name}-${process.pid}`);
  return startRtmpServer({ dir, rtmpPort: await freePort(), rtmpsPort: await freePort() });
}

export interface LiveSession {
  id: string;
  streamUri: string;
  publisher: Publisher;
}

/** Loops `clip` into the server as stream `name`, then analyses it in a new session of `token`'s user. */
export async function startLiveSession(
  services: Services,
  rtmp: RtmpServer,
  name: string,
  clip: string,
  token = services.users.alice.token,
): Promise<LiveSession> {
  const streamUri = rtmp.url(name);
  const publisher = publish(clip, streamUri);
  try {
    await waitForStream(streamUri);
    const created = await services.api('POST', '/v1/sessions', { body: { name, streamUri }, token });
    assert.is(created.status, 201, JSON.stringify(created.body));
    const id: string = created.body._id;
    await services.waitForSession(id, (session) => session.meta?.workerState === 'working', 60_000);
    return { id, streamUri, publisher };
  } catch (error) {
    await publisher.stop();
    throw error;
  }
}

/**
 * Waits until the session has run for `seconds`, and received that much media: on a loaded
 * machine a stream can take seconds to connect, and a check of the analysed span must not
 * depend on it.
 */
export async function runFor(services: Services, id: string, seconds: number): Promise<void> {
  await services.waitForSession(id, (session) => session.duration >= seconds && session.meta.mediaSeconds >= seconds, (seconds + 60) * 1000);
}

/** Stops the session as its client would; returns the finished session. */
export async function stopSession(services: Services, id: string): Promise<any> {
  const reply = await services.api('POST', `/v1/sessions/${id}/stop`);
  assert.is(reply.status, 200, JSON.stringify(reply.body));
  return reply.body;
}

/**
 * GETs `path` until it answers 200 with a body that satisfies `ready`, then once more after the
 * storage writer has stored every row published by then: the rows still in flight have reached
 * ClickHouse.
 */
export async function settled<T = any>(
  services: Services,
  path: string,
  ready: (body: T) => boolean = () => true,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  const read = async () => {
    const reply = await services.api<T>('GET', path);
    last = reply.body;
    return reply.status === 200 && ready(reply.body) ? reply.body : undefined;
  };
  while (Date.now() < deadline) {
    if (await read()) {
      await services.rowsStored(Math.max(1000, deadline - Date.now()));
      const body = await read();
      if (body) return body;
    }
    await sleep(250);
  }
  throw new Error(`GET ${path} did not settle in ${timeoutMs} ms; last: ${JSON.stringify(last)?.slice(0, 2000)}`);
}

export interface AudioEntry {
  start: number;
  end: number;
  frequency: number;
  intensity: number;
  pitchVariability?: number;
  speakingRate?: number;
  pauseRatio?: number;
}

/** The tone (one of `tones`) that `frequency` is within `tolerance` of, else undefined. */
export function toneOf(frequency: number, tones: readonly number[], tolerance = 0.03): number | undefined {
  return tones.find((hz) => Math.abs(frequency - hz) <= hz * tolerance);
}

/** A stretch of the session, in seconds from its start, during which one tone played. */
export interface ToneSpan {
  hz: number;
  start: number;
  end: number;
}

/**
 * Where each tone played, from the audio features alone: 5-s windows starting at every whole
 * second (granularity 5 queried at start offsets 0..4) whose frequency is one tone's; runs of
 * overlapping windows of the same tone merge into one span. A window that holds a tone switch
 * averages both tones and joins no span.
 */
export async function toneSpans(services: Services, id: string, tones: readonly number[], end: number): Promise<ToneSpan[]> {
  const windows: ToneSpan[] = [];
  for (let offset = 0; offset < 5; offset++) {
    const reply = await services.api<{ timeline: AudioEntry[] }>(
      'GET',
      `/v1/sessions/${id}/audio/features?granularity=5&start=${offset}&end=${end}`,
    );
    assert.is(reply.status, 200, JSON.stringify(reply.body));
    for (const entry of reply.body.timeline) {
      const hz = toneOf(entry.frequency, tones);
      if (hz !== undefined && entry.end - entry.start === 5) windows.push({ hz, start: entry.start, end: entry.end });
    }
  }
  windows.sort((a, b) => a.start - b.start);
  const spans: ToneSpan[] = [];
  for (const window of windows) {
    const last = spans.at(-1);
    if (last && window.hz === last.hz && window.start <= last.end) {
      last.end = Math.max(last.end, window.end);
      continue;
    }
    // No second can be mostly one tone and mostly the other.
    assert.ok(!last || window.start >= last.end, `windows of different tones overlap: ${JSON.stringify([last, window])}`);
    spans.push({ ...window });
  }
  return spans;
}

// The capacity benchmark's sessions, driven through the REST API as a client would: created one
// by one (refusals tried again for a while when the host's own admission is measured), awaited
// until their worker works, read at the window's edges, stopped. A session that fails is
// reported with its reason, never thrown: the other sessions are still measured.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Services } from '../../support/services.ts';
import type { Failure } from './capacity-report.ts';

export interface OpenSession {
  id: string;
  name: string;
  /** The session's `timestamp` in ms: the origin of its rows' seconds. */
  createdAt: number;
}

/** What the window needs of a session record. */
export interface SessionReading {
  workerState: string;
  mediaSeconds: number;
  /** When the owning host last wrote the record (its heartbeat), in ms: mediaSeconds is as of then. */
  healthCheckAt: number;
  /** Why the worker ended, once it has (stop reason and failure). */
  ended?: string;
  /** What the session costs its host, in cores over the last 10 s (meta.cpuCores), once measured. */
  cpuCores?: number;
}

const POLL_MS = 500;
// `working` alone is not enough: the worker reports it once ffprobe has described the stream,
// before ffmpeg has delivered anything, and an ffmpeg that then fails sends it back to
// `reconnecting`. Media received (written with each heartbeat) says the pull really runs.
const FLOWING_MEDIA_SECONDS = 3;

const RETRY_REFUSED_MS = 2000;

/**
 * Creates a session per stream, in order, then waits (at most `timeoutMs`) until media flows in
 * each. For `retryRefusedMs` from the first create, one answered 503 is tried again every 2 s,
 * as a patient client would; after that a 503 is a failure like any other.
 */
export async function openSessions(
  services: Services,
  streams: { name: string; uri: string }[],
  timeoutMs: number,
  signal: AbortSignal,
  retryRefusedMs = 0,
): Promise<{ created: OpenSession[]; working: OpenSession[]; failures: Failure[] }> {
  const created: OpenSession[] = [];
  const failures: Failure[] = [];
  const giveUpAt = Date.now() + retryRefusedMs;
  let next = 0;
  while (next < streams.length) {
    signal.throwIfAborted();
    const { name, uri } = streams[next]!;
    const reply = await services.api('POST', '/v1/sessions', { body: { name, streamUri: uri } }).catch((error: Error) => ({ status: 0, body: { message: error.message } }));
    if (reply.status === 503 && Date.now() < giveUpAt) {
      await sleep(RETRY_REFUSED_MS, undefined, { signal });
      continue;
    }
    if (reply.status === 201) created.push({ id: reply.body._id, name, createdAt: Date.parse(reply.body.timestamp) });
    else failures.push({ session: name, stage: 'create', reason: `${reply.status} ${reply.body?.message ?? ''}`.trim() });
    next++;
  }
  const waiting = new Map(created.map((session) => [session.id, session]));
  const last = new Map<string, string>();
  const deadline = Date.now() + timeoutMs;
  while (waiting.size && Date.now() < deadline) {
    for (const [id, reading] of await readSessions(services, [...waiting.values()])) {
      last.set(id, describe(reading));
      if (reading?.workerState === 'working' && reading.mediaSeconds >= FLOWING_MEDIA_SECONDS) waiting.delete(id);
      else if (reading && ['stopped', 'failed'].includes(reading.workerState)) {
        failures.push({ session: waiting.get(id)!.name, stage: 'start', reason: describe(reading) });
        waiting.delete(id);
      }
    }
    await sleep(POLL_MS, undefined, { signal });
  }
  for (const session of waiting.values()) {
    failures.push({ session: session.name, stage: 'start', reason: `no media flowing after ${timeoutMs / 1000} s (${last.get(session.id) ?? 'never read'})` });
  }
  const failed = new Set(failures.map((failure) => failure.session));
  return { created, working: created.filter((session) => !failed.has(session.name)), failures };
}

/** Each session's record now; undefined for one that could not be read. */
export async function readSessions(services: Services, sessions: OpenSession[]): Promise<Map<string, SessionReading | undefined>> {
  const readings = await Promise.all(sessions.map(async (session) => {
    const reply = await services.api('GET', `/v1/sessions/${session.id}`).catch(() => undefined);
    if (reply?.status !== 200) return [session.id, undefined] as const;
    const { meta } = reply.body;
    const ended = [meta.stopReason, meta.failure].filter(Boolean).join(': ') || undefined;
    const reading: SessionReading = { workerState: meta.workerState, mediaSeconds: meta.mediaSeconds, healthCheckAt: Date.parse(meta.healthCheck), ended, cpuCores: meta.cpuCores };
    return [session.id, reading] as const;
  }));
  return new Map(readings);
}

/** Stops every session that was created; one that is already finished answers 400, as expected. */
export async function closeSessions(services: Services, sessions: OpenSession[]): Promise<void> {
  await Promise.all(sessions.map((session) => services.api('POST', `/v1/sessions/${session.id}/stop`).catch(() => undefined)));
}

function describe(reading: SessionReading | undefined): string {
  if (!reading) return 'record not readable';
  const state = `worker ${reading.workerState}, ${reading.mediaSeconds.toFixed(1)} s of media`;
  return reading.ended ? `${state}, ${reading.ended}` : state;
}

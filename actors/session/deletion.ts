// Deleting a finished session (DELETE /v1/sessions/:id): one deletion per session. The request
// first takes the session for itself by compare-and-set (`deletingSince` in its record): a
// concurrent DELETE answers 409, so does a rename, and a later one 404 once it is gone. Then
// its stored results go, through a storage service (which owns ClickHouse), then its record.
// A purge that fails half-way is tried again by the service: within the request while its
// time lasts, and after that by any actor host, which resumes a deletion left for
// ABANDONED_MS (its host died, or the request ran out of time) on the next takeover check.
import { setTimeout as sleep } from 'node:timers/promises';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Caller, SessionRecord } from '../../bus/contracts/session.ts';
import { ServiceError, badRequest, beingDeleted, notFound, notInTime, unlessNotFound } from '../../bus/errors.ts';
import type { Logger } from '../../bus/log.ts';
import { call, type RequestObserver } from '../../bus/rpc.ts';
import { UNCHANGED, type SessionRecords } from '../../bus/session-records.ts';

// The record's deletion and the reply must fit in what is left of the caller's wait.
const REPLY_MARGIN_MS = 500;
// Less than this for the storage service is too little to wait for anything.
const MIN_PURGE_MS = 1000;
const RETRY_PAUSE_MS = 500;
/** A deletion untouched this long is resumed by a host; longer than any request waits. */
export const ABANDONED_MS = 30_000;
/** How long a host's resumed deletion may take. */
const RESUME_MS = 60_000;

export async function deleteSession(
  nc: NatsConnection,
  records: SessionRecords,
  caller: Caller,
  id: string,
  deadline: number,
  observe?: RequestObserver,
): Promise<void> {
  const found = await records.owned(caller, id, true).catch(unlessNotFound);
  if (!found) {
    // A session whose record has aged out of the bucket: storage finds it in the index, checks
    // it is the caller's and queues its purge (404 when it is not there, or already queued).
    // The deletion's marker on its key then tells every storage service, whose lists leave it
    // out at once; should it not be written, the queued purge already answers reads 404.
    await purge(nc, caller, id, deadline, observe);
    await records.remove(id, 0);
    return;
  }
  if (found.record.state === 'active') throw badRequest('session_active', 'the session is active; stop it before deleting it');
  const taken = await take(records, id, 0, deadline);
  if (taken === 'gone') throw notFound();
  if (taken === 'busy') throw beingDeleted();
  await purgeAndRemove(nc, records, taken, deadline, observe);
}

/** Finishes a deletion whose request gave up or whose host died. */
export async function resumeDeletion(nc: NatsConnection, records: SessionRecords, id: string, log: Logger, observe?: RequestObserver): Promise<void> {
  const taken = await take(records, id, ABANDONED_MS);
  if (typeof taken === 'string') return;
  log.info({ session: id }, 'resuming a deletion left unfinished');
  await purgeAndRemove(nc, records, taken, Date.now() + RESUME_MS, observe).catch((error: unknown) =>
    log.warn({ err: error, session: id }, 'a resumed deletion failed; it is tried again later'));
}

/** Marks the finished session as being deleted, unless a deletion took it within `olderThanMs`. */
async function take(records: SessionRecords, id: string, olderThanMs: number, deadline?: number): Promise<SessionRecord | 'gone' | 'busy'> {
  let busy = false;
  const taken = await records.update(id, (record) => {
    const other = record.deletingSince !== undefined && (olderThanMs === 0 || Date.now() - record.deletingSince < olderThanMs);
    busy = other || record.state === 'active';
    return busy ? UNCHANGED : { ...record, deletingSince: Date.now() };
  }, { deadline });
  if (!taken) return 'gone';
  return busy ? 'busy' : taken.record;
}

async function purgeAndRemove(
  nc: NatsConnection,
  records: SessionRecords,
  record: SessionRecord,
  deadline: number,
  observe?: RequestObserver,
): Promise<void> {
  await purge(nc, { user: record.user, product: record.product }, record.id, deadline, observe);
  // The record goes if this deletion still holds it (its owner may have added its last media seconds meanwhile).
  for (;;) {
    const current = await records.fresh(record.id);
    if (!current || current.record.deletingSince !== record.deletingSince) return;
    if (await records.remove(record.id, current.revision)) return;
  }
}

/** Has storage queue the session's rows for purging, trying again after a 503 while time is left. */
async function purge(nc: NatsConnection, caller: Caller, id: string, deadline: number, observe?: RequestObserver): Promise<void> {
  for (;;) {
    const left = deadline - Date.now() - REPLY_MARGIN_MS;
    if (left < MIN_PURGE_MS) {
      // Resumed by a host once the deletion is left for ABANDONED_MS.
      throw notInTime('the session is being deleted and the service finishes it; it answers 404 once gone', ABANDONED_MS);
    }
    try {
      await call(nc, 'sessions.purge', { caller, session: id }, left, observe);
      return;
    } catch (error) {
      if (!(error instanceof ServiceError) || error.status !== 503) throw error;
      await sleep(RETRY_PAUSE_MS);
    }
  }
}

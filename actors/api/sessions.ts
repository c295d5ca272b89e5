// Session requests that any actor host answers: read, rename, stop, delete. Each change is
// made before the caller's deadline or not at all: one that cannot land in time is answered 503
// with Retry-After (bus/session-records.ts), never left to the caller's timeout. A session whose
// record has aged out of the bucket is known to storage's index alone: it is read from there,
// and can be deleted, not renamed (storage/sessions/archive.ts).
import type { NatsConnection } from '@nats-io/transport-node';
import type { Caller, Session } from '../../bus/contracts/session.ts';
import { archived, badRequest, beingDeleted, notFound, unlessNotFound } from '../../bus/errors.ts';
import type { Logger } from '../../bus/log.ts';
import { mayBeArchived } from '../../bus/ids.ts';
import { queues } from '../../bus/subjects.ts';
import { call, serve, type RequestObserver } from '../../bus/rpc.ts';
import { presentSession, publicRecord } from '../../bus/session-view.ts';
import { deleteSession } from '../session/deletion.ts';
import { finish } from '../session/lifecycle.ts';
import type { SessionRecords } from '../../bus/session-records.ts';

/** `recordMaxAgeMs`: how long the bucket keeps a record not written (SESSION_RECORD_MAX_AGE_SECONDS). */
export function serveSessions(nc: NatsConnection, records: SessionRecords, recordMaxAgeMs: number, log: Logger, observe?: RequestObserver) {
  const options = { queue: queues.api, log, observe };
  /** The caller's session from its record; `undefined` when there is none in the bucket. */
  const recorded = (caller: Caller, session: string) => records.owned(caller, session).catch(unlessNotFound);
  /**
   * The caller's session whose record has aged out, as storage's index has it; 404 when there is
   * none, at once for an id too young to have aged out (most ids missing from the bucket).
   */
  const fromArchive = async (caller: Caller, session: string, deadline: number) => {
    if (!mayBeArchived(session, recordMaxAgeMs)) throw notFound();
    return call(nc, 'sessions.archived', { caller, session }, deadline - Date.now() - REPLY_MARGIN_MS, observe);
  };
  return [
    serve(nc, 'sessions.get', async ({ caller, session }, { deadline }): Promise<Session> => {
      const found = await recorded(caller, session);
      return found ? presentSession(publicRecord(found.record)) : fromArchive(caller, session, deadline);
    }, options),

    serve(nc, 'sessions.update', async ({ caller, session, body }, { deadline }): Promise<Session> => {
      if (!(await recorded(caller, session))) {
        await fromArchive(caller, session, deadline);
        throw archived();
      }
      // Renames at once: each lands in turn, the last one wins.
      const updated = await records.update(session, (record) => {
        if (record.deletingSince !== undefined) throw beingDeleted();
        return { ...record, name: body.name };
      }, { deadline });
      if (!updated) throw notFound();
      return presentSession(publicRecord(updated.record));
    }, options),

    serve(nc, 'sessions.stop', async ({ caller, session }, { deadline }): Promise<Session> => {
      const found = await recorded(caller, session);
      if (!found) throw notActive((await fromArchive(caller, session, deadline)).state);
      const { record } = found;
      if (record.state !== 'active') throw notActive(record.state);
      const stopped = await finish(records, session, 'client', undefined, undefined, deadline);
      if (!stopped) throw notFound();
      if (stopped.record.stopReason !== 'client') throw notActive(stopped.record.state);
      return presentSession(publicRecord(stopped.record));
    }, options),

    serve(nc, 'sessions.delete', async ({ caller, session }, { deadline }): Promise<null> => {
      await deleteSession(nc, records, caller, session, deadline, observe);
      return null;
    }, options),
  ];
}

// What a reply needs to travel back once storage has answered.
const REPLY_MARGIN_MS = 200;

const notActive = (state: string) =>
  badRequest('session_not_active', `the session is ${state}; only an active session can be stopped`);

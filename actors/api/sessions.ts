// Session requests that any actor host answers: read, rename, stop, delete. Each change is
// made before the caller's deadline or not at all: one that cannot land in time is answered 503
// with Retry-After (bus/session-records.ts), never left to the caller's timeout.
import type { NatsConnection } from '@nats-io/transport-node';
import type { Session } from '../../bus/contracts/session.ts';
import { badRequest, beingDeleted, notFound } from '../../bus/errors.ts';
import type { Logger } from '../../bus/log.ts';
import { queues } from '../../bus/subjects.ts';
import { serve, type RequestObserver } from '../../bus/rpc.ts';
import { presentSession, publicRecord } from '../../bus/session-view.ts';
import { deleteSession } from '../session/deletion.ts';
import { finish } from '../session/lifecycle.ts';
import type { SessionRecords } from '../../bus/session-records.ts';

export function serveSessions(nc: NatsConnection, records: SessionRecords, log: Logger, observe?: RequestObserver) {
  const options = { queue: queues.api, log, observe };
  return [
    serve(nc, 'sessions.get', async ({ caller, session }): Promise<Session> => {
      const { record } = await records.owned(caller, session);
      return presentSession(publicRecord(record));
    }, options),

    serve(nc, 'sessions.update', async ({ caller, session, body }, { deadline }): Promise<Session> => {
      await records.owned(caller, session);
      // Renames at once: each lands in turn, the last one wins.
      const updated = await records.update(session, (record) => {
        if (record.deletingSince !== undefined) throw beingDeleted();
        return { ...record, name: body.name };
      }, { deadline });
      if (!updated) throw notFound();
      return presentSession(publicRecord(updated.record));
    }, options),

    serve(nc, 'sessions.stop', async ({ caller, session }, { deadline }): Promise<Session> => {
      const { record } = await records.owned(caller, session);
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

const notActive = (state: string) =>
  badRequest('session_not_active', `the session is ${state}; only an active session can be stopped`);

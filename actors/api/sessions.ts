// Session requests that any host answers: read, list, rename, stop.
import type { ClickHouseClient } from '@clickhouse/client';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Session, SessionPage } from '../../bus/contracts/session.ts';
import { badRequest, notFound } from '../../bus/errors.ts';
import { queues } from '../../bus/subjects.ts';
import { serve } from '../../bus/rpc.ts';
import { presentSession, publicRecord } from '../../bus/session-view.ts';
import { listSessions } from '../../storage/sessions-index.ts';
import { finish } from '../session/lifecycle.ts';
import type { SessionStore } from '../session/store.ts';
import { ownedSession } from './access.ts';

export function serveSessions(nc: NatsConnection, store: SessionStore, clickhouse: ClickHouseClient) {
  const options = { queue: queues.api };
  return [
    serve(nc, 'sessions.get', async ({ caller, session }): Promise<Session> => {
      const { record } = await ownedSession(store, caller, session);
      return presentSession(publicRecord(record));
    }, options),

    serve(nc, 'sessions.list', async ({ caller, query }): Promise<SessionPage> => {
      const fromMs = dateBound(query.from, 'from');
      const toMs = dateBound(query.to, 'to');
      const { records, hasMore } = await listSessions(clickhouse, {
        user: caller.user,
        state: query.state,
        type: query.type,
        limit: query.limit,
        offset: query.offset,
        fromMs,
        toMs,
      });
      const now = Date.now();
      return { hasMore, data: records.map((r) => presentSession(r, now)), offset: query.offset, limit: query.limit };
    }, options),

    serve(nc, 'sessions.update', async ({ caller, session, body }): Promise<Session> => {
      await ownedSession(store, caller, session);
      const updated = await store.update(session, (record) => ({ ...record, name: body.name }));
      if (!updated) throw notFound();
      return presentSession(publicRecord(updated.record));
    }, options),

    serve(nc, 'sessions.stop', async ({ caller, session }): Promise<Session> => {
      const { record } = await ownedSession(store, caller, session);
      if (record.state !== 'active') throw notActive(record.state);
      const stopped = await finish(store, session, 'client');
      if (!stopped) throw notFound();
      if (stopped.record.stopReason !== 'client') throw notActive(stopped.record.state);
      return presentSession(publicRecord(stopped.record));
    }, options),
  ];
}

const notActive = (state: string) =>
  badRequest('session_not_active', `the session is ${state}; only an active session can be stopped`);

function dateBound(value: string | undefined, field: 'from' | 'to'): number | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value.length === 10 ? `${value}T00:00:00Z` : value);
  if (Number.isNaN(ms)) {
    throw badRequest('invalid_query', `query.${field}: is not a valid date`, [
      { field: `query.${field}`, message: 'is not a valid date' },
    ]);
  }
  return ms;
}

// The session list, served by the storage service: its newest pages from memory, the rest from
// the sessions table (storage/sessions/session-lists.ts decides).
import type { NatsConnection } from '@nats-io/transport-node';
import { MAX_DATE_MS, type SessionPage } from '../../bus/contracts/session.ts';
import { badRequest } from '../../bus/errors.ts';
import type { Logger } from '../../bus/log.ts';
import { serve, type CallContext, type RequestObserver } from '../../bus/rpc.ts';
import type { SessionRecords } from '../../bus/session-records.ts';
import { presentSession, publicRecord } from '../../bus/session-view.ts';
import { queues } from '../../bus/subjects.ts';
import type { SessionLists } from '../sessions/session-lists.ts';

// A session is active until its expiry, which its host (or, when that host died, the one taking
// it over) enforces within seconds; an hour covers every host being down for a while.
const EXPIRY_GRACE_MS = 3_600_000;

export function serveSessionList(
  nc: NatsConnection,
  records: SessionRecords,
  lists: SessionLists,
  sessionMaxSeconds: number,
  log: Logger,
  observe?: RequestObserver,
) {
  return serve(nc, 'sessions.list', async ({ caller, query }, { deadline }: CallContext): Promise<SessionPage> => {
    const fromMs = dateBound(query.from, 'from');
    const toMs = dateBound(query.to, 'to');
    const now = Date.now();
    const page = await lists.page({
      user: caller.user,
      state: query.state,
      type: query.type,
      limit: query.limit,
      offset: query.offset,
      fromMs,
      toMs,
      activeSinceMs: now - sessionMaxSeconds * 1000 - EXPIRY_GRACE_MS,
    }, deadline);
    // The index holds each session as of its last listed change; heartbeats (healthCheck,
    // mediaSeconds) are newer in the records this service follows.
    const data = page.records.map((indexed) => {
      const latest = records.peek(indexed.id);
      return presentSession(latest ? publicRecord(latest.record) : indexed, now);
    });
    return { hasMore: page.hasMore, data, offset: query.offset, limit: query.limit };
  }, { queue: queues.api, log, observe });
}

/** A list's date bound in ms: ISO 8601 (a date alone is midnight UTC) or Unix milliseconds. */
function dateBound(value: string | undefined, field: 'from' | 'to'): number | undefined {
  if (value === undefined) return undefined;
  const invalid = (message: string) =>
    badRequest('invalid_query', `query.${field}: ${message}`, [{ field: `query.${field}`, message }]);
  if (/^\d+$/.test(value)) {
    const ms = Number(value);
    if (ms > MAX_DATE_MS) throw invalid(`must be at most ${MAX_DATE_MS} (${new Date(MAX_DATE_MS).toISOString()}) as Unix milliseconds`);
    return ms;
  }
  const ms = Date.parse(value.length === 10 ? `${value}T00:00:00Z` : value);
  if (Number.isNaN(ms)) throw invalid('is not a valid date');
  return ms;
}

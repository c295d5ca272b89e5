// A session's custom events, served by the storage service from the custom_events table.
import type { ClickHouseClient } from '@clickhouse/client';
import type { NatsConnection } from '@nats-io/transport-node';
import { badRequest } from '../../bus/errors.ts';
import type { Logger } from '../../bus/log.ts';
import { serve, type RequestObserver } from '../../bus/rpc.ts';
import { queues } from '../../bus/subjects.ts';
import { listEvents } from '../results/events.ts';
import { readsUntil } from '../clickhouse/read-deadline.ts';
import type { ReadContext, ReadsInFlight } from '../clickhouse/reads-in-flight.ts';
import type { SessionArchive } from '../sessions/archive.ts';

export function serveEventList(
  nc: NatsConnection,
  sessions: SessionArchive,
  clickhouse: ClickHouseClient,
  inFlight: ReadsInFlight,
  log: Logger,
  observe?: RequestObserver,
) {
  return serve(nc, 'events.list', inFlight.bound(async ({ caller, session, query }, { deadline, priority }: ReadContext) => {
    await sessions.owned(caller, session);
    if (query.from !== undefined && query.to !== undefined && query.to <= query.from) {
      throw badRequest('invalid_query', 'query.to: must be greater than from', [
        { field: 'query.to', message: 'must be greater than from' },
      ]);
    }
    const page = await listEvents(readsUntil(clickhouse, deadline, priority), session, query);
    return { ...page, offset: query.offset, limit: query.limit };
  }), { queue: queues.api, log, observe });
}

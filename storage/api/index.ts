// Session index entries from the actor hosts, inserted at once so that a list made right after
// a create, rename or stop shows it. A host that cannot reach a storage service sends the entry
// through the ROWS stream instead, and the writer catches up.
import type { ClickHouseClient } from '@clickhouse/client';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Logger } from '../../bus/log.ts';
import { serve, type RequestObserver } from '../../bus/rpc.ts';
import { queues } from '../../bus/subjects.ts';
import { indexSession } from '../sessions-index.ts';

export function serveSessionIndex(nc: NatsConnection, clickhouse: ClickHouseClient, log: Logger, observe?: RequestObserver) {
  return serve(nc, 'sessions.index', async (row) => {
    await indexSession(clickhouse, row);
    return null;
  }, { queue: queues.api, log, observe });
}

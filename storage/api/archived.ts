// A session whose record has aged out of the bucket, as its index row shows it: what an actor
// host, which keeps the records, answers a read, a rename or a stop of such a session with
// (storage/sessions/archive.ts).
import type { NatsConnection } from '@nats-io/transport-node';
import type { Logger } from '../../bus/log.ts';
import { serve, type RequestObserver } from '../../bus/rpc.ts';
import { presentSession } from '../../bus/session-view.ts';
import { queues } from '../../bus/subjects.ts';
import type { ReadsInFlight } from '../clickhouse/reads-in-flight.ts';
import type { SessionArchive } from '../sessions/archive.ts';

export function serveArchivedSession(nc: NatsConnection, archive: SessionArchive, inFlight: ReadsInFlight, log: Logger, observe?: RequestObserver) {
  return serve(nc, 'sessions.archived', inFlight.bound(async ({ caller, session }) => presentSession((await archive.archived(caller, session)).record)), {
    queue: queues.api,
    log,
    observe,
  });
}

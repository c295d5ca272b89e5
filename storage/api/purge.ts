// Removal of a finished session's rows, asked by the actor host that deletes the session
// before it deletes the record. The record is read again here: only the owner's finished
// session is purged, whoever asks. The index must hold every change of the record first, so
// that none is stored after the purge (a record being deleted is not indexed again).
import type { ClickHouseClient } from '@clickhouse/client';
import type { JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { badRequest, unavailable } from '../../bus/errors.ts';
import type { Logger } from '../../bus/log.ts';
import { serve, type RequestObserver } from '../../bus/rpc.ts';
import type { SessionRecords } from '../../bus/session-records.ts';
import { queues } from '../../bus/subjects.ts';
import { purgeSession } from '../purge.ts';
import type { ClusterNodes } from '../cluster-nodes.ts';
import type { IndexProgress } from '../index-progress.ts';
import type { Schema } from '../schema.ts';

// What the purge itself is left at least.
const INDEX_WAIT_MARGIN_MS = 1000;

export function serveSessionPurge(
  nc: NatsConnection,
  records: SessionRecords,
  clickhouse: ClickHouseClient,
  jsm: JetStreamManager,
  progress: IndexProgress,
  schema: Schema,
  cluster: ClusterNodes | undefined,
  log: Logger,
  observe?: RequestObserver,
  countMutations?: (count: number) => void,
) {
  return serve(nc, 'sessions.purge', async ({ caller, session }, { deadline }) => {
    const { record } = await records.owned(caller, session, true);
    if (record.state === 'active') throw badRequest('session_active', 'the session is active; stop it before deleting it');
    if (!(await progress.caughtUp(deadline - INDEX_WAIT_MARGIN_MS))) {
      throw unavailable('the session index is catching up with this session; nothing was deleted, retry shortly');
    }
    await purgeSession(clickhouse, jsm, record, deadline, schema, cluster, countMutations);
    return null;
  }, { queue: queues.api, log, observe });
}

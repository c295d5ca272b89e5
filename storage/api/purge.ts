// Removal of a finished session's rows, asked by the actor host that deletes the session
// before it deletes the record. The record is read again here: only the owner's finished
// session is purged, whoever asks.
import type { ClickHouseClient } from '@clickhouse/client';
import type { JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { badRequest } from '../../bus/errors.ts';
import type { Logger } from '../../bus/log.ts';
import { serve, type RequestObserver } from '../../bus/rpc.ts';
import type { SessionRecords } from '../../bus/session-records.ts';
import { queues } from '../../bus/subjects.ts';
import { purgeSession } from '../purge.ts';
import type { ClusterNodes } from '../cluster-nodes.ts';
import type { Schema } from '../schema.ts';

export function serveSessionPurge(
  nc: NatsConnection,
  records: SessionRecords,
  clickhouse: ClickHouseClient,
  jsm: JetStreamManager,
  schema: Schema,
  cluster: ClusterNodes | undefined,
  log: Logger,
  observe?: RequestObserver,
  countMutations?: (count: number) => void,
) {
  return serve(nc, 'sessions.purge', async ({ caller, session }, { deadline }) => {
    const { record } = await records.owned(caller, session, true);
    if (record.state === 'active') throw badRequest('session_active', 'the session is active; stop it before deleting it');
    await purgeSession(clickhouse, jsm, record, deadline, schema, cluster, countMutations);
    return null;
  }, { queue: queues.api, log, observe });
}

// A deleted session's purge, asked by the actor host that deletes the session before it
// deletes the record (after which every read of the session answers 404). The record is read
// again here: only the owner's finished session is queued, whoever asks. The index must hold
// every change of the record first, so that none is stored after the purge (a record being
// deleted is not indexed again), and the session's last rows must have left ROWS, so that the
// purge finds them. Then the session is queued (storage/purge-queue.ts), once however often it
// is asked, and a purge round removes its rows within PURGE_WINDOW_SECONDS.
import type { JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { badRequest, unavailable } from '../../bus/errors.ts';
import type { Logger } from '../../bus/log.ts';
import { serve, type RequestObserver } from '../../bus/rpc.ts';
import type { SessionRecords } from '../../bus/session-records.ts';
import { queues } from '../../bus/subjects.ts';
import { awaitRowsStored } from '../purge.ts';
import type { IndexProgress } from '../index-progress.ts';
import type { PurgeQueue } from '../purge-queue.ts';

// What the wait for the rows is left at least.
const INDEX_WAIT_MARGIN_MS = 1000;

export function serveSessionPurge(
  nc: NatsConnection,
  records: SessionRecords,
  jsm: JetStreamManager,
  progress: IndexProgress,
  queue: PurgeQueue,
  log: Logger,
  observe?: RequestObserver,
) {
  return serve(nc, 'sessions.purge', async ({ caller, session }, { deadline }) => {
    const { record } = await records.owned(caller, session, true);
    if (record.state === 'active') throw badRequest('session_active', 'the session is active; stop it before deleting it');
    if (!(await progress.caughtUp(deadline - INDEX_WAIT_MARGIN_MS))) {
      throw unavailable('the session index is catching up with this session; nothing was deleted, retry shortly');
    }
    await awaitRowsStored(jsm, record, deadline);
    await queue.add(record);
    records.markDeleted(session);
    return null;
  }, { queue: queues.api, log, observe });
}

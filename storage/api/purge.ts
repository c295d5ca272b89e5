// A deleted session's purge, asked by the actor host that deletes the session before it
// deletes the record (after which every read of the session answers 404). The record is read
// again here: only the owner's finished session is queued, whoever asks. The session is queued
// (storage/purge/purge-queue.ts), once however often it is asked, with its record's revision
// and its stop: its purge round waits for the index to hold every change up to that revision
// (a record being deleted is not indexed again) and for its last rows to leave ROWS, so that
// none is stored after the rows are gone. A session whose record has aged out is found in the
// index (storage/sessions/archive.ts) and queued with its row's revision. The answer waits for
// neither: behind a busy index consumer or writer that is other users' work, and nobody waits
// for the round.
import type { NatsConnection } from '@nats-io/transport-node';
import { badRequest, unlessNotFound } from '../../bus/errors.ts';
import type { Logger } from '../../bus/log.ts';
import { serve, type RequestObserver } from '../../bus/rpc.ts';
import type { SessionRecords } from '../../bus/session-records.ts';
import { queues } from '../../bus/subjects.ts';
import type { PurgeQueue } from '../purge/purge-queue.ts';
import type { SessionArchive } from '../sessions/archive.ts';

export function serveSessionPurge(
  nc: NatsConnection,
  records: SessionRecords,
  queue: PurgeQueue,
  archive: SessionArchive,
  log: Logger,
  observe?: RequestObserver,
) {
  return serve(nc, 'sessions.purge', async ({ caller, session }) => {
    const found = await records.owned(caller, session, true).catch(unlessNotFound);
    // A session whose record has aged out is in the index alone, its rows stored long ago.
    const { record, revision } = found ?? (await archive.archived(caller, session));
    if (record.state === 'active') throw badRequest('session_active', 'the session is active; stop it before deleting it');
    await queue.add({ id: record.id, createdAt: record.createdAt, revision, finishedAt: found?.record.finishedAt });
    records.markDeleted(session);
    return null;
  }, { queue: queues.api, log, observe });
}

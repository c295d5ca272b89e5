// Deleting a finished session (DELETE /v1/sessions/:id): first its stored results, through a
// storage service (which owns ClickHouse), then its record, by compare-and-set. In that order a
// failure at any step leaves the session in place, so the client's retry finishes the job; and
// the record goes only if nobody changed it since it was checked (a rename meanwhile is
// checked, and its index row removed, again).
import type { NatsConnection } from '@nats-io/transport-node';
import type { Caller } from '../../bus/contracts/session.ts';
import { badRequest, unavailable } from '../../bus/errors.ts';
import { call } from '../../bus/rpc.ts';
import type { SessionStore } from './store.ts';

// The record's deletion and the reply must fit in what is left of the caller's wait.
const REPLY_MARGIN_MS = 500;
// Less than this for the storage service is too little to wait for anything: refuse at once.
const MIN_PURGE_MS = 1000;
const ATTEMPTS = 3;

export async function deleteSession(
  nc: NatsConnection,
  store: SessionStore,
  caller: Caller,
  id: string,
  deadline: number,
): Promise<void> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const { record, revision } = await store.records.owned(caller, id, true);
    if (record.state === 'active') {
      throw badRequest('session_active', 'the session is active; stop it before deleting it');
    }
    const left = deadline - Date.now() - REPLY_MARGIN_MS;
    if (left < MIN_PURGE_MS) throw unavailable('too little time was left to delete the session; nothing was deleted, retry');
    await call(nc, 'sessions.purge', { caller, session: id }, left, store.observeRequests);
    if (await store.remove(id, revision)) return;
  }
  throw unavailable('the session kept changing while it was being deleted; retry');
}

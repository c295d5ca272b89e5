// A session is reachable only by the user who created it; to anyone else it does not exist.
import type { Caller } from '../../bus/contracts/session.ts';
import { notFound } from '../../bus/errors.ts';
import { SESSION_ID } from '../../bus/ids.ts';
import type { SessionStore, Versioned } from '../session/store.ts';

/** With `fresh`, read from the bucket rather than this host's cache. */
export async function ownedSession(store: SessionStore, caller: Caller, id: string, fresh = false): Promise<Versioned> {
  if (!SESSION_ID.test(id)) throw notFound();
  const found = fresh ? await store.get(id) : await store.read(id);
  if (!found || found.record.user !== caller.user) throw notFound();
  return found;
}

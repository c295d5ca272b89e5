// The moves of a session between states, as changes of its KV record.
import { config } from '../../bus/config.ts';
import type { SessionRecord, StopReason } from '../../bus/contracts/session.ts';
import { UNCHANGED, type SessionStore, type Versioned } from './store.ts';

const FAILURES: StopReason[] = ['resolution_exceeded', 'stream_unreachable', 'worker_failed'];

/**
 * Moves an active session to finished. With `owner`, only while that host still owns it, so a
 * host that lost the session to another cannot end it.
 */
export function finish(
  store: SessionStore,
  id: string,
  reason: StopReason,
  detail?: string,
  owner?: string,
): Promise<Versioned | undefined> {
  const now = Date.now();
  return store.update(id, (record) => {
    if (record.state !== 'active' || (owner !== undefined && record.owner !== owner)) return UNCHANGED;
    return {
      ...record,
      state: 'finished',
      finishedAt: now,
      stopReason: reason,
      workerState: FAILURES.includes(reason) ? 'failed' : 'stopped',
      ...(FAILURES.includes(reason) && detail ? { failure: detail } : {}),
    };
  });
}

export function isStale(record: SessionRecord, now: number = Date.now()): boolean {
  return record.state === 'active' && now - record.healthCheckAt > config.takeoverSeconds * 1000;
}

/** Claims a session whose owner stopped beating; fails (undefined) if another host was faster. */
export async function takeOver(store: SessionStore, id: string, hostId: string): Promise<SessionRecord | undefined> {
  let claimed = false;
  const result = await store.update(
    id,
    (record) => {
      if (!isStale(record)) return UNCHANGED;
      claimed = true;
      return { ...record, owner: hostId, healthCheckAt: Date.now(), workerState: 'starting' };
    },
    1,
  ).catch(() => undefined);
  return claimed ? result?.record : undefined;
}

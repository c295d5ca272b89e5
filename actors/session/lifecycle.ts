// The moves of a session between states, as changes of its KV record.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../../bus/log.ts';
import type { SessionRecord, StopReason } from '../../bus/contracts/session.ts';
import type { Versioned } from '../../bus/session-records.ts';
import { UNCHANGED, type SessionRecords } from '../../bus/session-records.ts';

const FAILURES: StopReason[] = ['resolution_exceeded', 'stream_unreachable', 'stream_too_fast', 'cost_exceeded', 'worker_failed'];

/**
 * Moves an active session to finished. With `owner`, only while that host still owns it, so a
 * host that lost the session to another cannot end it. With `deadline`, by then or not at all
 * (a 503 with Retry-After).
 */
export function finish(
  records: SessionRecords,
  id: string,
  reason: StopReason,
  detail?: string,
  owner?: string,
  deadline?: number,
): Promise<Versioned | undefined> {
  const now = Date.now();
  return records.update(id, (record) => {
    if (record.state !== 'active' || (owner !== undefined && record.owner !== owner)) return UNCHANGED;
    return {
      ...record,
      state: 'finished',
      finishedAt: now,
      stopReason: reason,
      workerState: FAILURES.includes(reason) ? 'failed' : 'stopped',
      ...(FAILURES.includes(reason) && detail ? { failure: detail } : {}),
    };
  }, { deadline });
}

/**
 * finish(), retried while the KV is unreachable (NATS restarting). If it still fails, the
 * caller leaves the session without a heartbeat: another host takes it over and its worker
 * ends it again, so a session never stays active with nobody working on it.
 */
export async function finishWithRetries(
  records: SessionRecords,
  id: string,
  reason: StopReason,
  detail: string | undefined,
  owner: string,
  log: Logger,
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await finish(records, id, reason, detail, owner);
      return;
    } catch (error) {
      if (attempt >= FINISH_ATTEMPTS) {
        log.error({ err: error, reason }, 'session could not be finished; leaving it to be taken over');
        return;
      }
      log.warn({ err: error, attempt }, 'finishing the session failed; retrying');
      await sleep(Math.min(250 * 2 ** attempt, 5000));
    }
  }
}

// About half a minute of retries: longer than a NATS restart takes.
const FINISH_ATTEMPTS = 10;

/** An active session whose owner has not beaten for longer than `takeoverMs`. */
export function isStale(record: SessionRecord, takeoverMs: number, now: number = Date.now()): boolean {
  return record.state === 'active' && now - record.healthCheckAt > takeoverMs;
}

/** Claims a session whose owner stopped beating, in a new epoch; fails (undefined) if another host was faster. */
export async function takeOver(records: SessionRecords, id: string, hostId: string, takeoverMs: number): Promise<SessionRecord | undefined> {
  let claimed = false;
  const result = await records.update(
    id,
    (record) => {
      if (!isStale(record, takeoverMs)) return UNCHANGED;
      claimed = true;
      const now = Date.now();
      // A new epoch: rows the stale owner still publishes for seconds from now on are refused.
      return { ...record, owner: hostId, healthCheckAt: now, workerState: 'starting', epoch: (record.epoch ?? 0) + 1, epochStartedAt: now };
    },
    { attempts: 1 },
  ).catch(() => undefined);
  return claimed ? result?.record : undefined;
}

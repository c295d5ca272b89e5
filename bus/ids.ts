// Session ids: 24 lowercase hex characters, time-ordered like MongoDB ObjectIds: 8 hex digits
// of creation seconds, then 16 random ones. The creation day can be read back from the id.
import { randomBytes } from 'node:crypto';

export const SESSION_ID = /^[0-9a-f]{24}$/;

export function newSessionId(now: number = Date.now()): string {
  const seconds = Math.floor(now / 1000).toString(16).padStart(8, '0');
  return seconds + randomBytes(8).toString('hex');
}

/** When the session was created, to the second, as its id says (ms since the epoch). */
export const sessionCreatedAt = (id: string) => parseInt(id.slice(0, 8), 16) * 1000;

/**
 * Whether the session's record may have aged out of the bucket, which keeps a record
 * `recordMaxAgeMs` after its last write, so after the session's creation at the soonest: a
 * younger id missing from the bucket was never there, or was deleted.
 */
export const mayBeArchived = (id: string, recordMaxAgeMs: number, now = Date.now()) =>
  SESSION_ID.test(id) && now - sessionCreatedAt(id) >= recordMaxAgeMs;

const DAY_SECONDS = 86_400;
const days = new Map<number, string>();

/** The UTC day (YYYY-MM-DD) the session was created on: the partition key of its rows. */
export function sessionDay(id: string): string {
  // Called for every row the writer stores: one date formatting per day, not per row.
  const day = Math.floor(parseInt(id.slice(0, 8), 16) / DAY_SECONDS);
  let text = days.get(day);
  if (text === undefined) {
    text = new Date(day * DAY_SECONDS * 1000).toISOString().slice(0, 10);
    if (days.size > 10_000) days.clear();
    days.set(day, text);
  }
  return text;
}

export const newId = (bytes = 12) => randomBytes(bytes).toString('hex');

/**
 * The JetStream message id of a row message: the same rows published twice (a retry, a
 * restarted worker) get the same id and are stored once. Rows an owner made carry its epoch: a
 * stale owner's copy of a second (refused by the storage writer's fence) must not stand for the
 * new owner's row of that second, which the stream would otherwise drop as a duplicate.
 */
export const rowMessageId = (session: string, kind: string, key: string | number, epoch?: number) =>
  `${session}.${kind}.${key}${epoch === undefined ? '' : `@${epoch}`}`;

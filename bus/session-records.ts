// The session records in the JetStream KV bucket, where the truth about every session lives:
// the one place that reads and changes them. Any process reads: the hosts that own sessions,
// and the storage services that answer result reads and keep the session index. Only actor
// hosts change them, each change a compare-and-set on the key's revision: two hosts can never
// both believe they own a session, and a change made on stale data fails and is retried on
// fresh data.
//
// Reads for the API come from a cache bounded in bytes (the records' JSON), kept current by a
// watch on the bucket (and by what this process writes); `fresh` reads go to the bucket.
import { setTimeout as sleep } from 'node:timers/promises';
import type { JetStreamClient } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import { openBucket } from './bucket.ts';
import { ByteBoundedCache } from './byte-bounded-cache.ts';
import type { Caller, SessionRecord } from './contracts/session.ts';
import { notFound, notInTime } from './errors.ts';
import { SESSION_ID } from './ids.ts';
import type { Logger } from './log.ts';
import { recordBytes } from './session-record-size.ts';
import { buckets } from './subjects.ts';

export interface Versioned {
  record: SessionRecord;
  revision: number;
}

/** Returned by a change function to leave the record as it is. */
export const UNCHANGED = Symbol('unchanged');

/** Told each change this process wrote, once the bucket has it: `before` is undefined for a create. */
export type Written = (before: SessionRecord | undefined, after: SessionRecord) => void;

/** Told every entry of the watch, in the bucket's order, with the entry's revision. */
export interface WatchFollower {
  /** The watch starts over: it replays the latest entry of every session first. */
  restarted(): void;
  put(record: SessionRecord, revision: number): void;
  deleted(id: string, revision: number): void;
}

export interface SessionRecordsOptions {
  /** How many NATS servers keep the bucket. */
  replicas: number;
  /** Bytes of records (their JSON) the cache holds at most; SESSION_RECORD_CACHE_BYTES. */
  cacheBytes?: number;
  /**
   * The bucket's bounds (SESSIONS_BUCKET_MAX_BYTES, SESSION_RECORD_MAX_AGE_SECONDS), set by
   * the process that gives them; one that gives none leaves the bucket's as they are.
   */
  bucket?: { maxBytes: number; maxAgeMs: number };
}

// SESSION_RECORD_CACHE_BYTES's default, for a process that names none.
const CACHE_BYTES = 64 * 1024 ** 2;
// A change whose caller set no time of its own gets this long to land.
const CHANGE_MS = 10_000;
// The pauses between compare-and-set attempts that lost to another process: random within a
// span that doubles from the first to the last, so that writers racing do not race again in step.
const FIRST_PAUSE_MS = 10;
const LAST_PAUSE_MS = 250;
// How long a deletion is remembered: far longer than any row of the session can still be on
// its way (a stopped worker flushes within seconds; a publisher retries for minutes at most).
const DELETIONS_KEPT_MS = 3_600_000;

export class SessionRecords {
  /** Recently read or changed records, least recently used first. */
  private readonly recent: ByteBoundedCache<Versioned>;
  /**
   * The last change queued for each session record: this process's changes of one record take
   * turns, so that they never lose a compare-and-set to each other (eight renames at once were
   * eight rounds of conflicts, each two round trips); only other processes' writes conflict.
   */
  private readonly turns = new Map<string, Promise<void>>();
  /** When a change last failed for the bucket's sake, until writable() reports it. */
  private bucketFailedAt: number | undefined;
  /** Sessions deleted lately, with when, oldest first: a row of theirs arriving now is late. */
  private readonly deletions = new Map<string, number>();
  private closed = false;

  private constructor(
    private readonly kv: KV,
    private readonly log: Logger,
    private readonly written: Written,
    cacheBytes: number,
  ) {
    this.recent = new ByteBoundedCache(cacheBytes);
  }

  /** `options`: how many NATS servers keep the bucket, or that with the bounds. */
  static async open(js: JetStreamClient, log: Logger, options: number | SessionRecordsOptions, written: Written = () => {}): Promise<SessionRecords> {
    const { replicas, cacheBytes = CACHE_BYTES, bucket } = typeof options === 'number' ? { replicas: options } : options;
    const kv = await openBucket(js, buckets.sessions, { replicas, maxBytes: bucket?.maxBytes, ttlMs: bucket?.maxAgeMs });
    return new SessionRecords(kv, log, written, cacheBytes);
  }

  /** Writes a new session's record; fails if the id is taken. */
  async create(record: SessionRecord): Promise<Versioned> {
    const json = JSON.stringify(record);
    const revision = await this.kv.create(record.id, json);
    this.written(undefined, record);
    return this.remember({ record, revision }, recordBytes(json));
  }

  /**
   * Applies `change` to the latest record and writes it if nobody wrote in between; on a
   * conflict, reads again and reapplies, after a random pause, until `deadline` (or `timeoutMs`
   * from now; by default CHANGE_MS). `change` may return UNCHANGED to write nothing. Undefined
   * when there is no such session. Past the deadline with no write landed it fails with a 503
   * and a Retry-After (ServiceError): for a conflict, nothing was written; for a bucket that did
   * not answer ("timeout"), a write already sent may still land. `attempts` caps the writes
   * tried (a takeover tries once: losing it means another host was faster).
   */
  async update(
    id: string,
    change: (record: SessionRecord) => SessionRecord | typeof UNCHANGED,
    { attempts = Infinity, deadline, timeoutMs }: { attempts?: number; deadline?: number; timeoutMs?: number } = {},
  ): Promise<Versioned | undefined> {
    const until = deadline ?? Date.now() + (timeoutMs ?? CHANGE_MS);
    return this.inTurn(id, until, () => this.compareAndSet(id, change, until, attempts));
  }

  private async compareAndSet(
    id: string,
    change: (record: SessionRecord) => SessionRecord | typeof UNCHANGED,
    deadline: number,
    attempts: number,
  ): Promise<Versioned | undefined> {
    for (let attempt = 0; ; attempt++) {
      const current = await before(deadline, this.fresh(id)).catch((error: unknown) => this.failedForTheBucket(error));
      if (!current) return undefined;
      const next = change(structuredClone(current.record));
      if (next === UNCHANGED) return current;
      let revision: number;
      const json = JSON.stringify(next);
      try {
        revision = await before(deadline, this.kv.update(id, json, current.revision, Math.max(1, deadline - Date.now())));
      } catch (error) {
        if (!isConflict(error)) this.failedForTheBucket(error);
        const pause = Math.random() * Math.min(LAST_PAUSE_MS, FIRST_PAUSE_MS * 2 ** attempt);
        // Another read and write must fit after the pause.
        if (attempt + 1 >= attempts || Date.now() + pause + 2 * FIRST_PAUSE_MS >= deadline) {
          throw notInTime('the session is being changed by many requests at once; this change was not made, retry later');
        }
        await sleep(pause);
        continue;
      }
      this.written(current.record, next);
      return this.remember({ record: next, revision }, recordBytes(json));
    }
  }

  /** Runs `work` once this process's earlier changes of the record are done, unless `deadline` passes first. */
  private async inTurn<T>(id: string, deadline: number, work: () => Promise<T>): Promise<T> {
    const previous = this.turns.get(id);
    let done!: () => void;
    const mine = new Promise<void>((resolve) => (done = resolve));
    const last = previous ? previous.then(() => mine) : mine;
    this.turns.set(id, last);
    try {
      if (previous) await before(deadline, previous, 'the session is being changed by many requests at once; this change was not made, retry later');
      return await work();
    } finally {
      done();
      if (this.turns.get(id) === last) this.turns.delete(id);
    }
  }

  /**
   * Deletes the record if it is still at `revision`: false when someone changed it since, so
   * the caller checks it again. Once deleted, every compare-and-set on it fails.
   */
  async remove(id: string, revision: number): Promise<boolean> {
    try {
      await this.kv.delete(id, { previousSeq: revision });
    } catch (error) {
      if (isConflict(error)) return false;
      throw error;
    }
    this.forget(id);
    return true;
  }

  /**
   * Resolves while the bucket can take writes as far as this process can tell; fails otherwise:
   * when its stream has no leader, and when a read or write of this process's failed since the
   * last call. The stream can answer for its status while no write lands (seen for 4 s and more
   * after a NATS server of three was lost while another caught up: a leader without its quorum).
   */
  async writable(): Promise<void> {
    const failedAt = this.bucketFailedAt;
    this.bucketFailedAt = undefined;
    await this.kv.status();
    if (failedAt !== undefined) throw new Error(`a change of a session record failed ${Date.now() - failedAt} ms ago`);
  }

  /** Notes that the bucket failed a change (it did not answer, or refused it), not a conflict; rethrows. */
  private failedForTheBucket(error: unknown): never {
    this.bucketFailedAt = Date.now();
    throw error;
  }

  /** The latest record, read from the bucket. */
  async fresh(id: string): Promise<Versioned | undefined> {
    const entry = await this.kv.get(id);
    if (!entry || entry.operation !== 'PUT') return undefined;
    return this.remember({ record: entry.json<SessionRecord>(), revision: entry.revision }, entry.length);
  }

  /**
   * Whether the session has ended: finished, or deleted (its key holds the deletion's marker);
   * undefined when its record was never written (a create still in flight, or one that failed).
   * A finished record this process holds is final and needs no round trip.
   */
  async ended(id: string): Promise<boolean | undefined> {
    if (this.recent.peek(id)?.record.state === 'finished' || this.deletions.has(id)) return true;
    const entry = await this.kv.get(id);
    if (!entry) return undefined;
    if (entry.operation !== 'PUT') return true;
    return this.remember({ record: entry.json<SessionRecord>(), revision: entry.revision }, entry.length).record.state !== 'active';
  }

  /** The record as this process last saw it: at most a watch delivery behind the latest write. */
  async cached(id: string): Promise<Versioned | undefined> {
    return this.recent.get(id) ?? this.fresh(id);
  }

  /** The record if this process has it at hand, without asking the bucket. */
  peek(id: string): Versioned | undefined {
    return this.recent.peek(id);
  }

  /**
   * The caller's session, or 404: a session of another user does not exist for the caller.
   * With `fresh`, read from the bucket rather than the cache.
   */
  async owned(caller: Caller, id: string, fresh = false): Promise<Versioned> {
    if (!SESSION_ID.test(id)) throw notFound();
    if (!fresh && this.deletions.has(id)) throw notFound();
    const found = fresh ? await this.fresh(id) : await this.cached(id);
    if (!found || found.record.user !== caller.user) throw notFound();
    return found;
  }

  /**
   * Follows every change of every session: keeps the cache current and tells `onChange`. A
   * watch that ends (NATS restarted, the bucket's stream moved) is opened again, replaying the
   * latest record of every session, so nothing is missed; `follower` is told each entry.
   */
  async watch(onChange: (record: SessionRecord) => void = () => {}, follower?: WatchFollower): Promise<void> {
    let updates = await this.kv.watch();
    void (async () => {
      while (!this.closed) {
        try {
          follower?.restarted();
          for await (const entry of updates) {
            if (entry.operation !== 'PUT') {
              this.recent.delete(entry.key);
              this.noteDeletion(entry.key, entry.created.getTime());
              follower?.deleted(entry.key, entry.revision);
              continue;
            }
            const record = entry.json<SessionRecord>();
            const seen = this.remember({ record, revision: entry.revision }, entry.length);
            onChange(seen.record);
            follower?.put(record, entry.revision);
          }
        } catch (error) {
          this.log.warn({ err: error }, 'session watch broke');
        }
        while (!this.closed) {
          await sleep(1000);
          try {
            updates = await this.kv.watch();
            this.log.info('session watch resumed');
            break;
          } catch (error) {
            this.log.warn({ err: error }, 'session watch cannot resume yet');
          }
        }
      }
    })();
  }

  /**
   * The session is deleted as far as this process is concerned, before the watch says so: its
   * purge is queued and its record about to go, and no read may find it meanwhile.
   */
  markDeleted(id: string): void {
    this.recent.delete(id);
    this.noteDeletion(id, Date.now());
  }

  /** Whether the session was deleted within the last hour, as far as the watch has told. */
  deletedLately(id: string): boolean {
    return this.deletions.has(id);
  }

  private noteDeletion(id: string, at: number): void {
    const since = Date.now() - DELETIONS_KEPT_MS;
    if (at < since) return;
    this.deletions.delete(id);
    this.deletions.set(id, at);
    for (const [oldest, when] of this.deletions) {
      if (when >= since) break;
      this.deletions.delete(oldest);
    }
  }

  /** Drops a deleted session from the cache at once, rather than when the watch reports it. */
  private forget(id: string): void {
    this.recent.delete(id);
  }

  /** Ends the watch. */
  close(): void {
    this.closed = true;
  }

  /** Keeps the newest revision of a record (`bytes`: its JSON's size); an older one arriving late is ignored. */
  private remember(seen: Versioned, bytes: number): Versioned {
    const known = this.recent.get(seen.record.id);
    if (known && known.revision > seen.revision) return known;
    this.recent.set(seen.record.id, seen, bytes);
    return seen;
  }
}

/** Whether a compare-and-set failed because the key changed (or, for a create, exists). */
export function isConflict(error: unknown): boolean {
  const text = error instanceof Error ? `${error.message} ${String((error as { code?: unknown }).code ?? '')}` : '';
  return /wrong last sequence|10071|key exists/i.test(text);
}

/** `work`'s result, or a 503 (ServiceError) once `deadline` has passed; the work itself goes on. */
async function before<T>(
  deadline: number,
  work: Promise<T>,
  message = 'timeout: the session records did not answer in time; a change may still be made, retry later',
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const startedAt = Date.now();
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(notInTime(message, Date.now() - startedAt)), Math.max(0, deadline - Date.now()));
  });
  try {
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
  }
}

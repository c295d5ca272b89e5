// The sessions whose stored rows wait to be purged, in the KV bucket `purges`, so that the
// queue outlives any storage service: a DELETE queues its session (storage/api/purge.ts) and a
// purge round removes the rows of many sessions with one mutation per table
// (storage/purge/purge-rounds.ts). A session is queued once: `queued.<id>` while it waits, then
// `purged.<id>` once its mutations are issued, so a retried or resumed deletion queues nothing.
// Only the session index queues a session again, when rows of it may have landed after its
// round (storage/sessions/session-index-follower.ts).
//
// The bucket is bounded in bytes (a full one refuses a DELETE with a 503 until a round has
// drained it) and its entries age out after PURGE_RECORDS_KEPT_MS: the purged markers only
// need to outlive a resumed deletion (actors/session/deletion.ts: minutes); a session still
// waiting is written again well before it would age out. A purged session leaves its queued
// key by a purge of that key's subject on the bucket's stream, which leaves no delete marker
// behind, so the keys under `queued.` are exactly the sessions waiting.
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import { openBucket } from '../../bus/bucket.ts';
import { unavailable } from '../../bus/errors.ts';
import { isConflict } from '../../bus/session-records.ts';
import { buckets } from '../../bus/subjects.ts';
import type { PurgedSession } from './purge.ts';

/** How long a purged session's marker (and any entry not written since) stays in the bucket. */
export const PURGE_RECORDS_KEPT_MS = 24 * 3_600_000;
// A session waiting this long (rounds failing for hours) is written again, so it never ages out.
const REWRITE_WAITING_AFTER_MS = PURGE_RECORDS_KEPT_MS / 2;
// Reads of waiting entries in flight at once while a round lists them.
const READS_AT_ONCE = 64;

const QUEUED = 'queued.';
const PURGED = 'purged.';

/**
 * A session waiting, with the revision that orders the queue, and its record's revision when
 * queued: the index must hold every change up to it before the session's rows go (0 for an
 * entry queued before entries carried it, once the index held the session). `finishedAt`: when
 * it stopped, after which its worker still flushes its last seconds (0 when long ago).
 */
export interface Waiting {
  session: PurgedSession;
  revision: number;
  recordRevision: number;
  finishedAt: number;
}

/** What a queued entry holds. */
interface Entry extends PurgedSession {
  revision?: number;
  finishedAt?: number;
}

export class PurgeQueue {
  private constructor(
    readonly kv: KV,
    private readonly jsm: JetStreamManager,
    private readonly stream: string,
  ) {}

  static async open(js: JetStreamClient, jsm: JetStreamManager, options: { replicas: number; maxBytes: number }): Promise<PurgeQueue> {
    const kv = await openBucket(js, buckets.purges, { replicas: options.replicas, maxBytes: options.maxBytes, ttlMs: PURGE_RECORDS_KEPT_MS });
    return new PurgeQueue(kv, jsm, (await kv.status()).streamInfo.config.name);
  }

  /** Queues the session's purge (`revision`: its record's): false when it is already queued or purged. */
  async add(session: PurgedSession & { revision: number; finishedAt?: number }): Promise<boolean> {
    if ((await this.kv.get(PURGED + session.id))?.operation === 'PUT') return false;
    try {
      const entry: Entry = { id: session.id, createdAt: session.createdAt, revision: session.revision, finishedAt: session.finishedAt };
      await this.kv.create(QUEUED + session.id, JSON.stringify(entry));
      return true;
    } catch (error) {
      if (isConflict(error)) return false;
      throw unavailable('the queue of sessions to purge cannot take this one now; nothing was deleted, retry later');
    }
  }

  /**
   * Queues a session again whose purge is waiting or done: rows of it stored after its round
   * read the queue (an insert in flight through it) go with the next round. A session its
   * deletion has not queued yet is left to that deletion, whose round comes after these rows.
   */
  async again(session: PurgedSession): Promise<void> {
    const [waiting, purged] = await Promise.all([this.kv.get(QUEUED + session.id), this.kv.get(PURGED + session.id)]);
    if (waiting?.operation !== 'PUT' && purged?.operation !== 'PUT') return;
    // Still waiting, it keeps the revision its round waits for the index to hold, and its stop.
    const kept = waiting?.operation === 'PUT' ? waiting.json<Entry>() : undefined;
    const entry: Entry = { id: session.id, createdAt: session.createdAt, revision: kept?.revision ?? 0, finishedAt: kept?.finishedAt };
    await this.kv.put(QUEUED + session.id, JSON.stringify(entry));
  }

  /** Whether the session's purge is queued or done: the session is gone, whatever else says so yet. */
  async holds(id: string): Promise<boolean> {
    const [queued, purged] = await Promise.all([this.kv.get(QUEUED + id), this.kv.get(PURGED + id)]);
    return queued?.operation === 'PUT' || purged?.operation === 'PUT';
  }

  /** How many sessions wait. */
  async length(): Promise<number> {
    return Object.keys(await this.waitingSubjects()).length;
  }

  /** The `limit` sessions queued first. */
  async oldest(limit: number): Promise<Waiting[]> {
    const keys = Object.keys(await this.waitingSubjects()).map((subject) => subject.slice(subject.indexOf(QUEUED)));
    const waiting: Waiting[] = [];
    for (let at = 0; at < keys.length; at += READS_AT_ONCE) {
      const entries = await Promise.all(keys.slice(at, at + READS_AT_ONCE).map((key) => this.kv.get(key)));
      for (const entry of entries) {
        if (entry?.operation !== 'PUT') continue;
        const session = entry.json<Entry>();
        const stale = Date.now() - entry.created.getTime() > REWRITE_WAITING_AFTER_MS;
        const revision = stale ? await this.kv.put(entry.key, entry.value) : entry.revision;
        waiting.push({ session: { id: session.id, createdAt: session.createdAt }, revision, recordRevision: session.revision ?? 0, finishedAt: session.finishedAt ?? 0 });
      }
    }
    return waiting.sort((a, b) => a.revision - b.revision).slice(0, limit);
  }

  /**
   * Marks the sessions purged and takes them off the queue as they were read: one queued again
   * since (again()) stays for the next round.
   */
  async purged(sessions: Waiting[]): Promise<void> {
    for (const { session, revision } of sessions) {
      await this.kv.put(PURGED + session.id, JSON.stringify({ purgedAt: Date.now() }));
      await this.jsm.streams.purge(this.stream, { filter: this.subject(QUEUED + session.id), seq: revision + 1 });
    }
  }

  private async waitingSubjects(): Promise<Record<string, number>> {
    const info = await this.jsm.streams.info(this.stream, { subjects_filter: this.subject(`${QUEUED}>`) });
    return info.state.subjects ?? {};
  }

  private subject(key: string): string {
    return `$KV.${buckets.purges}.${key}`;
  }
}

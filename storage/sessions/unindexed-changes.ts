// The changes of each user's sessions that the session index may not hold yet, as this storage
// service's watch on the sessions bucket saw them: what a list (or a seed) of that user must
// find in the index before ClickHouse answers it (storage/sessions/index-progress.ts). Every storage
// service watches every change, so each knows every user's changes, whichever service's
// follower stores them; what it cannot know is when another service's follower has stored one,
// so it keeps each change until it knows: a list found it in the index, or the index consumer
// has acknowledged everything up to it. One entry a session, its latest change: the changes of
// the last moments, and while the index lags, one per session changed since (at most one per
// session the bucket holds).
import type { SessionRecord } from '../../bus/contracts/session.ts';
import type { WatchFollower } from '../../bus/session-records.ts';
import { listed, type Listed } from './listed-changes.ts';

export interface UnindexedChange {
  id: string;
  /** Its rows' partition: a session's rows all share its creation second. */
  createdAt: number;
  revision: number;
  /** What the change lists: a row that lists the same shows the session as the change does. */
  listed: Listed;
  /** A list of its user stored it (own-changes.ts): not again, whether or not the consumer has. */
  storedByList?: boolean;
}

interface Waiter {
  revision: number;
  done: (reached: boolean) => void;
}

export class UnindexedChanges implements WatchFollower {
  /** The bucket revision the watch delivered last. */
  revision = 0;
  private readonly users = new Map<string, Map<string, UnindexedChange>>();
  /** The user of each session held: a deletion names the session alone. */
  private readonly userOf = new Map<string, string>();
  private waiters: Waiter[] = [];

  /** The watch replays the bucket: its entries are added again, none is lost meanwhile. */
  restarted(): void {
    this.revision = 0;
  }

  put(record: SessionRecord, revision: number): void {
    // A session being deleted gets no row (storage/sessions/listed-changes.ts): nothing to wait for.
    if (record.deletingSince !== undefined) this.forget(record.id);
    else {
      let sessions = this.users.get(record.user);
      if (!sessions) this.users.set(record.user, (sessions = new Map()));
      sessions.set(record.id, { id: record.id, createdAt: record.createdAt, revision, listed: listed(record) });
      this.userOf.set(record.id, record.user);
    }
    this.advance(revision);
  }

  deleted(id: string, revision: number): void {
    this.forget(id);
    this.advance(revision);
  }

  /** The user's changes the index may not hold yet. */
  of(user: string): UnindexedChange[] {
    return [...(this.users.get(user)?.values() ?? [])];
  }

  /** Whether a change of the session is still held (it left: the index has it, or it needs none). */
  holds(id: string): boolean {
    return this.userOf.has(id);
  }

  /** The index shows the session as of `revision`. */
  indexed(id: string, revision: number): void {
    const user = this.userOf.get(id);
    if (user !== undefined && this.users.get(user)!.get(id)!.revision <= revision) this.forget(id);
  }

  /** The index holds every change up to `revision`, or needs none. */
  indexedThrough(revision: number): void {
    for (const sessions of this.users.values()) {
      for (const change of sessions.values()) if (change.revision <= revision) this.forget(change.id);
    }
  }

  /** Changes held, of all users. */
  get size(): number {
    return this.userOf.size;
  }

  /** True once the watch has delivered `revision`; false when `until` (ms since the epoch) comes first. */
  reached(revision: number, until: number): Promise<boolean> {
    if (this.revision >= revision) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter: Waiter = {
        revision,
        done: (reached) => {
          clearTimeout(timer);
          this.waiters = this.waiters.filter((other) => other !== waiter);
          resolve(reached);
        },
      };
      const timer = setTimeout(() => waiter.done(false), Math.max(0, until - Date.now()));
      this.waiters.push(waiter);
    });
  }

  private advance(revision: number): void {
    this.revision = revision;
    for (const waiter of this.waiters) if (waiter.revision <= revision) waiter.done(true);
  }

  private forget(id: string): void {
    const user = this.userOf.get(id);
    if (user === undefined) return;
    this.userOf.delete(id);
    const sessions = this.users.get(user)!;
    sessions.delete(id);
    if (sessions.size === 0) this.users.delete(user);
  }
}

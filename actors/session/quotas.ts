// Per-user limits on active sessions, held in a KV bucket so that every host sees the same
// count. A user's entry lists the sessions it holds; new sessions are added by compare-and-set,
// so two hosts admitting the same user at once cannot both take the last slot. Sessions that
// have finished or been deleted, and creates that never wrote their record, are pruned when
// the entry is next changed: no host has to remember to give a slot back, not even one that
// died, and a stopped or deleted session's slot is free for the very next create.
//
// A user's creates that reach one host together (a fleet of cameras started at once) are
// admitted together: one read and one write of the entry for all that wait, rather than one
// round trip each, every loser of the compare-and-set reading and trying again.
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { JetStreamClient } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import { openBucket } from '../../bus/bucket.ts';
import { notInTime, quotaExceeded } from '../../bus/errors.ts';
import { buckets } from '../../bus/subjects.ts';
import { isConflict, type SessionRecords } from '../../bus/session-records.ts';

interface Held {
  id: string;
  /** When the slot was taken: a slot whose session was never written is kept for a while. */
  at: number;
}

/** A create waiting for its slot. */
interface Waiting {
  session: string;
  deadline: number;
  admitted(): void;
  refused(error: unknown): void;
}

// Longer than any create takes between taking the slot and writing the session record: only a
// slot whose record was never written is held this long; a finished or deleted one is not.
const RESERVATION_MS = 60_000;
// Hosts admitting the same user at once race for the entry: a loser tries again after a random
// pause, so that two do not collide again in step. Past the creates' deadline they are refused
// as a busy moment (503 with Retry-After).
const PAUSE_MS = 20;
// A default for a slot given back outside a request.
const RELEASE_MS = 5000;

export class UserQuotas {
  /** Per entry, the creates waiting on this host for the round that will admit them. */
  private readonly waiting = new Map<string, Waiting[]>();

  private constructor(
    private readonly kv: KV,
    private readonly records: SessionRecords,
    private readonly maxActive: number,
  ) {}

  static async open(js: JetStreamClient, records: SessionRecords, maxActive: number, replicas: number): Promise<UserQuotas> {
    const kv = await openBucket(js, buckets.quotas, { replicas });
    return new UserQuotas(kv, records, maxActive);
  }

  /** Takes a slot for `session` by `deadline`, or answers 429 when the user already holds them all. */
  admit(user: string, session: string, deadline: number): Promise<void> {
    const key = keyOf(user);
    return new Promise((admitted, refused) => {
      const queue = this.waiting.get(key);
      if (queue) {
        queue.push({ session, deadline, admitted, refused });
        return;
      }
      this.waiting.set(key, [{ session, deadline, admitted, refused }]);
      void this.admitWaiting(key);
    });
  }

  /** Gives back the slot of a session whose creation failed after `admit`. */
  async release(user: string, session: string): Promise<void> {
    const key = keyOf(user);
    const drop = (held: Held[]) => (held.some((slot) => slot.id === session) ? held.filter((slot) => slot.id !== session) : undefined);
    await this.change(key, drop, Date.now() + RELEASE_MS);
  }

  /** Rounds for `key` while creates wait: each round admits every one waiting that still fits. */
  private async admitWaiting(key: string): Promise<void> {
    for (let batch = this.waiting.get(key); batch && batch.length > 0; batch = this.waiting.get(key)) {
      this.waiting.set(key, []);
      let admitted: Waiting[] = [];
      let refused: Waiting[] = [];
      try {
        // The round lasts as long as the create that waits longest.
        const deadline = Math.max(...batch.map((create) => create.deadline));
        await this.change(key, (held) => {
          const room = Math.max(0, this.maxActive - held.length);
          admitted = batch!.slice(0, room);
          refused = batch!.slice(room);
          if (admitted.length === 0) return undefined;
          const at = Date.now();
          return [...held, ...admitted.map(({ session }) => ({ id: session, at }))];
        }, deadline);
      } catch (error) {
        for (const create of batch) create.refused(error);
        continue;
      }
      for (const create of admitted) create.admitted();
      for (const create of refused) {
        create.refused(quotaExceeded(`this user already has ${this.maxActive} active sessions, the most allowed; stop one first`));
      }
    }
    this.waiting.delete(key);
  }

  /**
   * Applies `next` to the entry's sessions still active, by compare-and-set, until it holds or
   * `deadline` is near; `next` answers undefined for nothing to write.
   */
  private async change(key: string, next: (held: Held[]) => Held[] | undefined, deadline: number): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      if (attempt > 0) {
        const pause = Math.random() * PAUSE_MS * Math.min(attempt, 5);
        // Another read and write must fit after the pause.
        if (Date.now() + pause + 2 * PAUSE_MS >= deadline) {
          throw notInTime('too many creates of this user at once; nothing was created, retry later');
        }
        await sleep(pause);
      }
      const entry = await this.kv.get(key);
      const revision = entry?.operation === 'PUT' ? entry.revision : 0;
      const written = next(await this.stillActive(revision ? entry!.json<Held[]>() : []));
      if (!written) return;
      try {
        if (revision) await this.kv.update(key, JSON.stringify(written), revision);
        else await this.kv.create(key, JSON.stringify(written));
        return;
      } catch (error) {
        if (!isConflict(error)) throw error;
      }
    }
  }

  /** The slots still taken: sessions active, and creates in flight (no record yet) for RESERVATION_MS. */
  private async stillActive(held: Held[]): Promise<Held[]> {
    const now = Date.now();
    const checked = await Promise.all(
      held.map(async (slot) => {
        const ended = await this.records.ended(slot.id);
        return ended === undefined ? now - slot.at < RESERVATION_MS : !ended;
      }),
    );
    return held.filter((_, i) => checked[i]);
  }
}

// KV keys allow few characters; user names may hold any.
const keyOf = (user: string) => `user.${createHash('sha256').update(user).digest('hex')}`;

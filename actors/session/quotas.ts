// Per-user limits on active sessions, held in a KV bucket so that every host sees the same
// count. A user's entry lists the sessions it holds; each new session is added by
// compare-and-set, so two hosts admitting the same user at once cannot both take the last
// slot. Sessions that have finished (or whose creation never completed) are pruned when the
// entry is next changed: no host has to remember to give a slot back, not even one that died.
import { createHash } from 'node:crypto';
import type { JetStreamClient } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import { openBucket } from '../../bus/bucket.ts';
import { quotaExceeded } from '../../bus/errors.ts';
import { buckets } from '../../bus/subjects.ts';
import { isConflict, type SessionStore } from './store.ts';

interface Held {
  id: string;
  /** When the slot was taken: a slot whose session does not exist yet is kept for a while. */
  at: number;
}

// Longer than any create takes between taking the slot and writing the session record.
const RESERVATION_MS = 60_000;

export class UserQuotas {
  private constructor(
    private readonly kv: KV,
    private readonly store: SessionStore,
    private readonly maxActive: number,
  ) {}

  static async open(js: JetStreamClient, store: SessionStore, maxActive: number, replicas: number): Promise<UserQuotas> {
    const kv = await openBucket(js, buckets.quotas, { replicas });
    return new UserQuotas(kv, store, maxActive);
  }

  /** Takes a slot for `session`, or answers 429 when the user already holds them all. */
  async admit(user: string, session: string): Promise<void> {
    const key = keyOf(user);
    for (let attempt = 0; attempt < 10; attempt++) {
      const entry = await this.kv.get(key);
      const revision = entry?.operation === 'PUT' ? entry.revision : 0;
      const held = await this.stillActive(revision ? entry!.json<Held[]>() : []);
      if (held.length >= this.maxActive) {
        throw quotaExceeded(`this user already has ${held.length} active sessions, the most allowed; stop one first`);
      }
      const next = JSON.stringify([...held, { id: session, at: Date.now() }]);
      try {
        if (revision) await this.kv.update(key, next, revision);
        else await this.kv.create(key, next);
        return;
      } catch (error) {
        if (!isConflict(error)) throw error;
      }
    }
    throw new Error(`quota of ${user}: too many concurrent changes`);
  }

  /** Gives back the slot of a session whose creation failed after `admit`. */
  async release(user: string, session: string): Promise<void> {
    const key = keyOf(user);
    for (let attempt = 0; attempt < 10; attempt++) {
      const entry = await this.kv.get(key);
      if (entry?.operation !== 'PUT') return;
      const held = entry.json<Held[]>();
      if (!held.some((slot) => slot.id === session)) return;
      try {
        await this.kv.update(key, JSON.stringify(held.filter((slot) => slot.id !== session)), entry.revision);
        return;
      } catch (error) {
        if (!isConflict(error)) throw error;
      }
    }
  }

  private async stillActive(held: Held[]): Promise<Held[]> {
    const now = Date.now();
    const checked = await Promise.all(
      held.map(async (slot) => {
        const found = await this.store.records.fresh(slot.id);
        if (found) return found.record.state === 'active';
        return now - slot.at < RESERVATION_MS;
      }),
    );
    return held.filter((_, i) => checked[i]);
  }
}

// KV keys allow few characters; user names may hold any.
const keyOf = (user: string) => `user.${createHash('sha256').update(user).digest('hex')}`;

// Per-user limits on active sessions, held in a KV bucket so that every host sees the same
// count. A user's entry lists the sessions it holds; new sessions are added by compare-and-set,
// so two hosts admitting the same user at once cannot both take the last slot. Sessions that
// have finished or been deleted, and creates that never wrote their record, are pruned when
// the entry is next changed: no host has to remember to give a slot back, not even one that
// died, and a stopped or deleted session's slot is free for the very next create. A slot is
// taken by session id, once: a retry that makes the session an earlier attempt claimed
// (admission.ts) takes the slot that attempt holds rather than a second.
//
// The bucket's compare-and-set is not always one: nats-server before 2.9.21 checks a write's
// expected revision before the write is agreed among a clustered stream's replicas, not as part
// of it, so two writes on the same revision a few ms apart can both be taken (nats-server#4320),
// the second dropping the slot the first added (seen in cluster/kv-leader-loss: a user's ninth
// session admitted). So the slots also count the user's sessions this host's watch knows are
// active, each checked against the bucket, and an entry missing one gets its slot back.
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
import type { SessionRecord } from '../../bus/contracts/session.ts';
import { isConflict, type SessionRecords } from '../../bus/session-records.ts';

export interface Held {
  id: string;
  /** When the slot was taken. */
  at: number;
  /**
   * Until when a slot whose session has no record yet is kept: its create's last moment to send
   * the record, and the while a write sent then may still land. Absent in slots written before
   * it was kept, which are kept RESERVATION_MS from `at`.
   */
  until?: number;
}

/** A create waiting for its slot. */
interface Waiting extends SlotRequest {
  admitted(): void;
  refused(error: unknown): void;
}

// How long after its create's deadline a slot without a record is kept: a write sent just before
// the deadline to a bucket whose leader is then lost is made, if ever, by the next leader, which
// took up to 15 s to take writes again on a busy machine (cluster/node-loss).
const LATE_WRITE_MS = 30_000;
// The same for slots that name no deadline: longer than any create takes.
const RESERVATION_MS = 60_000;
// Hosts admitting the same user at once race for the entry: a loser tries again after a random
// pause, so that two do not collide again in step. Past the creates' deadline they are refused
// as a busy moment (503 with Retry-After).
const PAUSE_MS = 20;
// A default for a slot given back outside a request, and the pause before checking it again.
const RELEASE_MS = 5000;
const RELEASE_CHECK_MS = 1000;

export class UserQuotas {
  /** Per entry, the creates waiting on this host for the round that will admit them. */
  private readonly waiting = new Map<string, Waiting[]>();
  /** Per user, the sessions active as this host's watch of the records has them. */
  private readonly active = new Map<string, Set<string>>();

  private constructor(
    private readonly kv: KV,
    private readonly records: SessionRecords,
    private readonly maxActive: number,
  ) {}

  static async open(js: JetStreamClient, records: SessionRecords, maxActive: number, replicas: number): Promise<UserQuotas> {
    const kv = await openBucket(js, buckets.quotas, { replicas });
    return new UserQuotas(kv, records, maxActive);
  }

  /** Told each session record the host's watch delivers. */
  observe(record: SessionRecord): void {
    let sessions = this.active.get(record.user);
    if (record.state === 'active' && record.deletingSince === undefined) {
      if (!sessions) this.active.set(record.user, (sessions = new Set()));
      sessions.add(record.id);
    } else if (sessions?.delete(record.id) && sessions.size === 0) this.active.delete(record.user);
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
      void this.admitWaiting(user, key);
    });
  }

  /**
   * Gives back the slot that `admit(user, session, deadline)` took, or may have (`unsure`: its
   * write went unconfirmed), for a create that failed before writing its record. The first try is
   * awaited. If the slot's write was unconfirmed, or the release fails, the entry is checked
   * again every second until the slot would have expired anyway, and the slot dropped whenever
   * it is there while its session has no record: a write sent to a leader lost since may be made
   * late by the next, and on nats-server before 2.9.21 a write on the same revision can put a
   * dropped slot back. A slot kept longer than this create asked for is another attempt's, a
   * retry with the same key that makes the session, and stays.
   */
  async release(user: string, session: string, deadline: number, { unsure = false } = {}): Promise<void> {
    const mine = deadline + LATE_WRITE_MS;
    if ((await this.dropUnwritten(user, session, mine)) && !unsure) return;
    void (async () => {
      while (Date.now() + RELEASE_CHECK_MS < mine) {
        await sleep(RELEASE_CHECK_MS, undefined, { ref: false });
        await this.dropUnwritten(user, session, mine);
      }
    })();
  }

  /** Drops the slot if the entry holds it for `mine` at most and its session has no record; false if the bucket did not answer. */
  private async dropUnwritten(user: string, session: string, mine: number): Promise<boolean> {
    const drop = async (held: Held[]) => {
      const slot = held.find((candidate) => candidate.id === session);
      if (!slot || until(slot) > mine || (await this.records.ended(session)) !== undefined) return undefined;
      return held.filter((other) => other !== slot);
    };
    return this.change(user, drop, Date.now() + RELEASE_MS).then(() => true, () => false);
  }

  /** Rounds for the user's entry while creates wait: each round admits every one waiting that still fits. */
  private async admitWaiting(user: string, key: string): Promise<void> {
    for (let batch = this.waiting.get(key); batch && batch.length > 0; batch = this.waiting.get(key)) {
      this.waiting.set(key, []);
      let round: Round<Waiting> = { admitted: [], refused: [] };
      try {
        // The round lasts as long as the create that waits longest.
        const deadline = Math.max(...batch.map((create) => create.deadline));
        await this.change(user, (held) => (round = admitInto(held, batch!, this.maxActive, Date.now())).written, deadline);
      } catch (error) {
        for (const create of batch) create.refused(error);
        continue;
      }
      const { admitted, refused } = round;
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
  private async change(user: string, next: (held: Held[]) => Held[] | undefined | Promise<Held[] | undefined>, deadline: number): Promise<void> {
    const key = keyOf(user);
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
      const written = await next(await this.stillActive(user, revision ? entry!.json<Held[]>() : []));
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

  /**
   * The slots still taken: sessions active, and creates in flight (no record yet) until their
   * slot's `until`; and a slot again for each session of the user the watch knows active that
   * the entry lacks, once the bucket confirms it is.
   */
  private async stillActive(user: string, held: Held[]): Promise<Held[]> {
    const now = Date.now();
    const checked = await Promise.all(
      held.map(async (slot) => {
        const ended = await this.records.ended(slot.id);
        return ended === undefined ? now < until(slot) : !ended;
      }),
    );
    const listed = new Set(held.map((slot) => slot.id));
    const missing = [...(this.active.get(user) ?? [])].filter((id) => !listed.has(id));
    const lost = await Promise.all(missing.map(async (id) => ((await this.records.ended(id)) === false ? [{ id, at: now }] : [])));
    return [...held.filter((_, i) => checked[i]), ...lost.flat()];
  }
}

const until = (slot: Held) => slot.until ?? slot.at + RESERVATION_MS;

/** A create asking for a slot: its session, and its last moment to send the session's record. */
export interface SlotRequest {
  session: string;
  deadline: number;
}

export interface Round<T extends SlotRequest> {
  admitted: T[];
  refused: T[];
  /** The entry to write, or undefined if it is to stay as it is. */
  written?: Held[];
}

/**
 * The creates of one round that fit beside the slots `held`, in order, at most `maxActive` in
 * all. A session has one slot however many of its creates ask (a retry of a create with the same
 * key makes the same session), kept as long as the one that needs it longest.
 */
export function admitInto<T extends SlotRequest>(held: Held[], creates: T[], maxActive: number, now: number): Round<T> {
  const slots = new Map(held.map((slot) => [slot.id, slot]));
  const wanted = new Map<string, number>();
  const round: Round<T> = { admitted: [], refused: [] };
  let room = maxActive - held.length;
  for (const create of creates) {
    const holding = slots.has(create.session) || wanted.has(create.session);
    if (!holding && room <= 0) {
      round.refused.push(create);
      continue;
    }
    if (!holding) room--;
    round.admitted.push(create);
    wanted.set(create.session, Math.max(wanted.get(create.session) ?? 0, create.deadline + LATE_WRITE_MS));
  }
  const longer = (slot: Held) => until(slot) < (wanted.get(slot.id) ?? 0);
  const added = [...wanted].filter(([id]) => !slots.has(id));
  if (added.length === 0 && !held.some(longer)) return round;
  return {
    ...round,
    written: [
      ...held.map((slot) => (longer(slot) ? { ...slot, until: wanted.get(slot.id) } : slot)),
      ...added.map(([id, needed]) => ({ id, at: now, until: needed })),
    ],
  };
}

// KV keys allow few characters; user names may hold any.
const keyOf = (user: string) => `user.${createHash('sha256').update(user).digest('hex')}`;

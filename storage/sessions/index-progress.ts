// How far the session index has followed the sessions bucket, for one user. A caller must find
// in the index the changes of its own sessions made before it asked, and nothing else: waiting
// for the shared index consumer to have nothing pending (as lists once did) made every user wait
// for the busiest one's changes, for ever while that user kept changing sessions.
//
// Which changes: those this service's watch holds for the user (storage/sessions/unindexed-changes.ts),
// once the watch has delivered the bucket's latest revision asked after the caller came (a
// change the caller made before is at or below it). When: the followers of several services
// share the consumer, so this service cannot see whether another's has stored a change; the
// index itself says so (its rows and the user's span of creation times, which a list reads first). A session's latest row shows the change when its revision is the
// change's or later, or when it lists what the change lists (a heartbeat gets no row, and the
// follower writes one whenever what a list shows differs from its last row:
// storage/sessions/listed-changes.ts). A check asks ClickHouse about the user's held sessions alone.
//
// A list whose user's changes the consumer has not stored within OWN_CHANGES_AFTER_MS stores
// them itself (storage/sessions/own-changes.ts), on the services that keep the index: what the
// consumer is busy with, other users' changes, does not make it wait longer.
//
// Held changes also leave once the consumer has acknowledged everything up to them (its
// acknowledgement floor, or all it delivered when it is idle), checked every second here, so
// that the users who never list hold nothing for long.
import type { ClickHouseClient } from '@clickhouse/client';
import type { JetStreamManager } from '@nats-io/jetstream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../../bus/log.ts';
import { buckets, consumers } from '../../bus/subjects.ts';
import { AskedAfter } from './asked-after.ts';
import { changesListing, listed } from './listed-changes.ts';
import { OWN_CHANGES_AFTER_MS, type OwnChanges } from './own-changes.ts';
import { latestRows, sessionSpan } from './sessions-index.ts';
import type { UnindexedChange, UnindexedChanges } from './unindexed-changes.ts';

export const SESSIONS_STREAM = `KV_${buckets.sessions}`;

const POLL_MS = 50;
const PRUNE_MS = 1000;

export class IndexProgress {
  private readonly head: AskedAfter<number>;
  private readonly acknowledged: AskedAfter<number>;
  private timer?: NodeJS.Timeout;
  private pruning?: Promise<void>;

  constructor(
    jsm: JetStreamManager,
    private readonly clickhouse: ClickHouseClient,
    private readonly changes: UnindexedChanges,
    private readonly log: Logger,
    /** On a service that keeps the index: how a list stores its user's changes itself. */
    private readonly own?: OwnChanges,
  ) {
    this.head = new AskedAfter(async () => {
      const { state } = await jsm.streams.info(SESSIONS_STREAM);
      // An empty bucket (purged, or every record past the bucket's age) has no change to wait
      // for: its last sequence names a message that no watch will ever deliver.
      return state.messages === 0 ? 0 : state.last_seq;
    });
    this.acknowledged = new AskedAfter(async () => {
      const info = await jsm.consumers.info(SESSIONS_STREAM, consumers.sessionIndex);
      return info.num_pending === 0 && info.num_ack_pending === 0 ? info.delivered.stream_seq : info.ack_floor.stream_seq;
    });
  }

  /** The bucket's latest revision, as asked after this call; 0 while the bucket holds nothing. */
  latest(): Promise<number> {
    return this.head.latest();
  }

  /** True once this service's watch has delivered `revision`; false when `until` comes first. */
  watched(revision: number, until: number): Promise<boolean> {
    return this.changes.reached(revision, until);
  }

  /**
   * The revision up to which every change has been stored in the index or needed no row, as
   * asked after this call. A change replaced in the bucket before it was stored leaves the
   * stream, and this passes it at once: the newer change is what holds the session then.
   */
  acknowledgedThrough(): Promise<number> {
    return this.acknowledged.latest();
  }

  /**
   * Waits until the index shows every change of the user's sessions up to `revision` (the
   * bucket's when the caller came): false when `until` (ms since the epoch) comes first.
   */
  async userCaughtUp(user: string, revision: number, until: number): Promise<boolean> {
    if (!(await this.watched(revision, until))) return false;
    const ownAfter = Date.now() + OWN_CHANGES_AFTER_MS;
    let waiting = this.changes.of(user);
    for (;;) {
      // A change left meanwhile: found by another list, acknowledged, or its session deleted.
      waiting = waiting.filter((change) => this.changes.holds(change.id));
      if (waiting.length) waiting = await this.notShown(user, waiting);
      if (!waiting.length) return true;
      // Not awaited: the consumer may still come first, which the next look shows.
      if (Date.now() >= ownAfter) void this.own?.store(user, waiting);
      if (Date.now() + POLL_MS > until) return false;
      await sleep(POLL_MS);
    }
  }

  /** What a list of the user waits for now: the watch's revision and the user's changes held. */
  waitingFor(user: string): { watched: number; held: Array<Pick<UnindexedChange, 'id' | 'revision'>> } {
    return { watched: this.changes.revision, held: this.changes.of(user).map(({ id, revision }) => ({ id, revision })) };
  }

  /** Checks every second which held changes the consumer has acknowledged. */
  start(): void {
    this.timer = setInterval(() => {
      this.pruning ??= this.prune()
        .catch((error: unknown) => this.log.debug({ err: error }, 'the session index consumer was not asked how far it is'))
        .finally(() => (this.pruning = undefined));
    }, PRUNE_MS);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.pruning;
  }

  /**
   * The changes the index does not show yet; those it shows leave the held ones. A list finds
   * a session by its row and by the user's span of creation times, which ClickHouse fills a
   * moment after the row: both must show it.
   */
  private async notShown(user: string, changes: UnindexedChange[]): Promise<UnindexedChange[]> {
    const [rows, span] = await Promise.all([latestRows(this.clickhouse, user, changes), sessionSpan(this.clickhouse, user)]).catch((error: unknown) => {
      this.log.warn({ err: error, user }, 'the session index was not read; asking again');
      return [new Map(), undefined] as const;
    });
    return changes.filter((change) => {
      const row = rows.get(change.id);
      if (!row || !span || change.createdAt < span.first || change.createdAt > span.last) return true;
      if (row.revision < change.revision && changesListing(listed(row.record), change.listed)) return true;
      this.changes.indexed(change.id, change.revision);
      return false;
    });
  }

  private async prune(): Promise<void> {
    // Nothing held, nothing to let go: the bus is not asked (each storage service, every second).
    if (this.changes.size === 0) return;
    const through = await this.acknowledgedThrough();
    // A change gone from the stream unacknowledged was replaced by one written before the
    // floor was asked: at or below the bucket's revision asked now, which the watch must have
    // delivered, so that the held change of its session is the newer one.
    const latest = await this.latest();
    if (await this.changes.reached(latest, Date.now() + PRUNE_MS)) this.changes.indexedThrough(through);
  }
}

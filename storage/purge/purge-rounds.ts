// Purge rounds: the rows of deleted sessions leave ClickHouse in batches, so that deletes cost
// the same however many there are. ClickHouse 18.16 removes rows only by ALTER TABLE ...
// DELETE, a mutation that rewrites parts of a shared table in the background; one per table
// per session (seven a delete) let one user's create-stop-delete loop keep hundreds queued,
// starving every user's merges and inserts. A round takes up to `batchSessions` queued
// sessions (storage/purge/purge-queue.ts) and issues one mutation per table for all of them
// (storage/purge/purge.ts). A round is due every `windowMs`, or a quarter of that after the last
// when the queue holds a whole batch or more; one storage service runs it (storage/purge/purge-lease.ts).
// A session waits for its round until the index holds every change of its record up to the
// one its purge was queued at, and until its last result rows have left ROWS (its worker
// flushes its last seconds after its stop), so that no row of it is stored after its rows are
// gone. The DELETE waits for neither: behind a busy writer or index that is other users' rows.
import type { ClickHouseClient } from '@clickhouse/client';
import type { JetStreamManager } from '@nats-io/jetstream';
import { ServiceError } from '../../bus/errors.ts';
import type { Logger } from '../../bus/log.ts';
import type { ClusterNodes } from '../schema/cluster-nodes.ts';
import type { PurgeLease } from './purge-lease.ts';
import type { PurgeQueue, Waiting } from './purge-queue.ts';
import { deleteRowsOf, rowsSettled } from './purge.ts';
import type { Schema } from '../schema/schema.ts';

export interface PurgeRoundOptions {
  windowMs: number;
  batchSessions: number;
  /** Told the mutations each round issued. */
  countMutations?: (count: number) => void;
}

// How long a round waits for its mutations before it counts them as on their way.
const ROUND_WAIT_MS = 30_000;
// Sessions whose rows in flight a round asks JetStream about at once.
const CHECKS_AT_ONCE = 64;

export class PurgeRounds {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly queue: PurgeQueue,
    /** The revision up to which the session index holds every change (storage/sessions/index-progress.ts). */
    private readonly indexedThrough: () => Promise<number>,
    private readonly lease: PurgeLease,
    private readonly jsm: JetStreamManager,
    private readonly clickhouse: ClickHouseClient,
    private readonly schema: Schema,
    private readonly cluster: ClusterNodes | undefined,
    private readonly options: PurgeRoundOptions,
    private readonly log: Logger,
  ) {}

  /** Checks whether a round is due several times a window. */
  start(): void {
    const checkMs = Math.max(250, Math.min(5000, this.options.windowMs / 8));
    this.timer = setInterval(() => {
      this.running ??= this.tick()
        .catch((error: unknown) => this.log.warn({ err: error }, 'a purge round failed; its sessions stay queued for the next'))
        .finally(() => (this.running = undefined));
    }, checkMs);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  private async tick(): Promise<void> {
    const { windowMs, batchSessions } = this.options;
    const waiting = await this.queue.length();
    if (waiting === 0) return;
    const due = (sinceLastMs: number) => sinceLastMs >= windowMs || (waiting >= batchSessions && sinceLastMs >= windowMs / 4);
    if (!(await this.lease.take(due))) return;
    const oldest = await this.queue.oldest(batchSessions);
    const indexed = await this.indexedThrough();
    const taken = await this.settled(oldest.filter(({ recordRevision }) => recordRevision <= indexed));
    if (taken.length < oldest.length) {
      this.log.info({ sessions: oldest.length - taken.length, indexed }, 'sessions left for a later round: the index does not hold their last changes yet, or their last rows are on their way');
    }
    if (taken.length === 0) return;
    const batch = taken.map(({ session }) => session);
    try {
      await deleteRowsOf(this.clickhouse, this.schema, batch, Date.now() + ROUND_WAIT_MS, this.cluster, this.options.countMutations);
    } catch (error) {
      // On a cluster the mutations are issued and on their way to every replica: asking again adds mutations, not speed.
      if (!(error instanceof ServiceError && error.status === 503)) throw error;
      this.log.info({ sessions: batch.length }, 'purge mutations issued and still running on some replicas');
    }
    await this.queue.purged(taken);
    this.log.info({ sessions: batch.length }, 'purged the rows of deleted sessions');
  }

  /** The sessions none of whose rows is still on its way to ClickHouse. */
  private async settled(sessions: Waiting[]): Promise<Waiting[]> {
    const settled: Waiting[] = [];
    for (let at = 0; at < sessions.length; at += CHECKS_AT_ONCE) {
      const some = sessions.slice(at, at + CHECKS_AT_ONCE);
      const checks = await Promise.all(some.map(({ session, finishedAt }) => rowsSettled(this.jsm, session.id, finishedAt)));
      settled.push(...some.filter((_, i) => checks[i]));
    }
    return settled;
  }
}

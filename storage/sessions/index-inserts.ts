// The one way rows go into the session index, whoever inserts them: the follower of the shared
// consumer (session-index-follower.ts), or a list storing its own user's changes the consumer
// has not reached yet (own-changes.ts). Either may insert while the session is being deleted,
// and the purge round may run before the insert lands; the row would then bring the deleted
// session back to the list (test/integration/sessions-delete-late-index.test.ts). So an insert
// leaves out the rows of sessions this service's watch knows are being deleted or gone, and
// queues for purging again the sessions it learns were deleted while their rows were inserted,
// once their deletion has queued them (storage/purge/purge-queue.ts `again`): the next round
// removes those rows.
import type { ClickHouseClient } from '@clickhouse/client';
import type { Logger } from '../../bus/log.ts';
import type { PurgedSession } from '../purge/purge.ts';
import { indexSessions, type SessionIndexRow } from './sessions-index.ts';

export class IndexInserts {
  constructor(
    private readonly clickhouse: ClickHouseClient,
    /** Whether the session is being deleted or gone, as this service's watch has it. */
    private readonly deleting: (session: string) => boolean,
    /** Queues the sessions' purge again: rows of them may have landed after it. */
    private readonly purgeAgain: (sessions: PurgedSession[]) => Promise<void>,
    private readonly log: Logger,
  ) {}

  /** Inserts the rows of sessions not being deleted; throws when ClickHouse does not take them. */
  async insert(rows: SessionIndexRow[]): Promise<void> {
    const kept = rows.filter((row) => !this.deleting(row.id));
    if (!kept.length) return;
    await indexSessions(this.clickhouse, kept);
    await this.purgeLate(kept);
  }

  /** The sessions of `rows` deleted while the rows were inserted: their purge may have run before the rows landed. */
  private async purgeLate(rows: SessionIndexRow[]): Promise<void> {
    const late = new Map(rows.filter((row) => this.deleting(row.id)).map((row) => [row.id, { id: row.id, createdAt: row.created_ms }]));
    if (!late.size) return;
    this.log.info({ sessions: [...late.keys()] }, 'sessions deleted while their index rows were inserted: purged again');
    await this.purgeAgain([...late.values()]).catch((error: unknown) =>
      this.log.warn({ err: error, sessions: [...late.keys()] }, 'sessions deleted while indexed not queued for purging again'));
  }
}

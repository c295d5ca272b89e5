// A list stores its own user's changes when the shared index consumer has not within a moment.
// The consumer serves every user's changes in order, so behind another user's flood of them (a
// host renaming hundreds of sessions, a busy ClickHouse slowing each batch) a user's own change
// would wait its turn, and the list with it. Rows carry the record's KV revision, so a change
// stored here and again by the follower collapses into one session in every read.
//
// Bounded by the user's own changes: each change is stored here once (the next change of the
// session is a new one), at most OWN_ROWS of them by one list, one insert per user at a time.
import type { Logger } from '../../bus/log.ts';
import type { SessionRecords } from '../../bus/session-records.ts';
import type { IndexInserts } from './index-inserts.ts';
import { indexRow, type SessionIndexRow } from './sessions-index.ts';
import type { UnindexedChange } from './unindexed-changes.ts';

/** How long a list leaves its user's changes to the shared consumer, which stores a change within a few hundred ms when it keeps up. */
export const OWN_CHANGES_AFTER_MS = 500;
/** Changes one list stores at most: a list waits for the user's changes, not for the user's history. */
const OWN_ROWS = 100;

export class OwnChanges {
  /** Users with an insert of their changes in flight. */
  private readonly storing = new Set<string>();

  constructor(
    private readonly records: SessionRecords,
    private readonly inserts: IndexInserts,
    private readonly log: Logger,
    /** Told the rows each insert stored. */
    private readonly counted: (rows: number) => void = () => {},
  ) {}

  /** Stores the user's `changes` not stored here before, each as its record is now. */
  async store(user: string, changes: UnindexedChange[]): Promise<void> {
    const fresh = changes.filter((change) => !change.storedByList).slice(0, OWN_ROWS);
    if (!fresh.length || this.storing.has(user)) return;
    this.storing.add(user);
    try {
      const rows: SessionIndexRow[] = [];
      for (const change of fresh) {
        const latest = await this.records.cached(change.id);
        // A record of another user would be a bug elsewhere: this user's list is no place to store it.
        if (latest && latest.record.user === user && latest.revision >= change.revision) rows.push(indexRow(latest.record, latest.revision));
      }
      await this.inserts.insert(rows);
      for (const change of fresh) change.storedByList = true;
      this.counted(rows.length);
    } catch (error) {
      this.log.warn({ err: error, user, changes: fresh.length }, 'a list did not store its user\'s changes; it waits for the index consumer');
    } finally {
      this.storing.delete(user);
    }
  }
}

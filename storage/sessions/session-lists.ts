// Who answers a session list: the newest sessions in memory when they are as new as the bucket
// and hold the page, ClickHouse otherwise, once the index holds the caller's changes as the
// bucket has them (storage/sessions/index-progress.ts). The one place that decides.
import type { ClickHouseClient } from '@clickhouse/client';
import type { Logger } from '../../bus/log.ts';
import type { SessionRecords } from '../../bus/session-records.ts';
import type { PublicRecord } from '../../bus/session-view.ts';
import { unavailable } from '../../bus/errors.ts';
import type { IndexProgress } from './index-progress.ts';
import type { SessionListMetrics } from '../metrics.ts';
import type { NewestSessions } from './newest-sessions.ts';
import { readsUntil } from '../clickhouse/read-deadline.ts';
import type { ReadsInFlight } from '../clickhouse/reads-in-flight.ts';
import { listSessions, type SessionListFilter } from './sessions-index.ts';

// More active sessions than this (a user has USER_MAX_ACTIVE_SESSIONS at most, unless sessions
// are left active with no host) and lists of active ones are ClickHouse's.
const ACTIVE_SEED = 1000;
// What a ClickHouse read of a page is left at least, after waiting for the index.
const READ_MS = 1000;
// How long a user's seed waits for the index; past it, the next list tries again.
const SEED_WAIT_MS = 10_000;

export class SessionLists {
  /** Users whose newest sessions are being read from the sessions table into memory. */
  private readonly seeding = new Set<string>();

  constructor(
    private readonly memory: NewestSessions,
    private readonly records: SessionRecords,
    private readonly progress: IndexProgress,
    private readonly clickhouse: ClickHouseClient,
    /** Each user's reads at once: a page from ClickHouse is one; a page from memory holds no socket and is not. */
    private readonly inFlight: ReadsInFlight,
    private readonly perUser: number,
    private readonly log: Logger,
    private readonly metrics?: SessionListMetrics,
  ) {}

  /** The page `filter` asks for; ClickHouse's queries for it end by `deadline` (ms since the epoch). */
  async page(filter: SessionListFilter, deadline: number): Promise<{ records: PublicRecord[]; hasMore: boolean }> {
    // A change the caller made before asking (a create, rename or stop through any host) is
    // in memory, or in the index, once the revision the bucket had then is.
    const latest = await this.progress.latest();
    // The watch delivers a change moments after the bucket has it, whoever is busy changing
    // sessions: worth waiting for rather than leaving the page to ClickHouse.
    await this.progress.watched(latest, deadline - READ_MS);
    const behind = Math.max(0, latest - this.memory.revision);
    this.metrics?.behind.set(behind);
    const remembered = behind === 0 ? this.memory.page(filter) : undefined;
    this.metrics?.pages.inc({ source: remembered ? 'memory' : 'clickhouse' });
    if (behind === 0 && !this.memory.seeded(filter.user)) this.seed(filter.user, filter.activeSinceMs, latest);
    if (remembered) return remembered;
    if (!(await this.progress.userCaughtUp(filter.user, latest, deadline - READ_MS))) {
      this.log.warn({ user: filter.user, latest, ...this.progress.waitingFor(filter.user) }, 'a list found the index behind its user\'s changes at its deadline');
      throw unavailable('the session index is catching up with your recent changes; retry shortly');
    }
    const page = await this.inFlight.run(filter.user, (priority) => listSessions(readsUntil(this.clickhouse, deadline, priority), filter));
    // A deleted session's index rows go with its purge round (a minute at most): until then the
    // table still has it, and the page leaves it out (one shorter for each such session).
    return { ...page, records: page.records.filter((record) => !this.records.deletedLately(record.id)) };
  }

  /**
   * Reads the user's newest sessions, and the active ones created since `activeSinceMs`, from
   * the sessions table into memory, in the background, once the table holds the user's
   * changes up to `revision`.
   */
  private seed(user: string, activeSinceMs: number, revision: number): void {
    if (this.perUser === 0 || this.seeding.has(user)) return;
    this.seeding.add(user);
    // A session deleted while its rows wait to be purged, or finished since its row was
    // written, is not listed from memory as the table has it.
    const current = (records: PublicRecord[]) => records.filter((record) =>
      !this.records.deletedLately(record.id) && (this.records.peek(record.id)?.record.state ?? record.state) === record.state);
    const mark = this.memory.mark(user);
    // Read once the table holds every change of the user's the bucket had: a user memory
    // forgot has only the table for what it knew.
    this.progress.userCaughtUp(user, revision, Date.now() + SEED_WAIT_MS)
      .then(async (caughtUp) => {
        if (!caughtUp) return;
        const [latest, active] = await Promise.all([
          listSessions(this.clickhouse, { user, offset: 0, limit: this.perUser, activeSinceMs }),
          listSessions(this.clickhouse, { user, state: 'active', offset: 0, limit: ACTIVE_SEED, activeSinceMs }),
        ]);
        // Forgotten meanwhile, the user's changes before the wait may be in neither: next time.
        if (this.memory.forgottenSince(user, mark)) return;
        this.memory.seed(user, current(latest.records), !latest.hasMore);
        if (!active.hasMore) this.memory.seedActives(user, current(active.records), activeSinceMs);
      })
      .catch((error: unknown) => this.log.warn({ err: error, user }, 'newest sessions not read from ClickHouse'))
      .finally(() => this.seeding.delete(user));
  }
}

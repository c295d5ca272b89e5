// Sessions whose records have aged out of the sessions bucket: finished, and not written for
// SESSION_RECORD_MAX_AGE_SECONDS. Their rows stay in ClickHouse, and so does their last row in
// the session index, which holds the session as a list shows it: the index answers for them,
// so that a session the list shows can be read, and deleted, however old it is. It is
// read-only: a rename would need its record back in the shared bucket, which one user could
// fill so with years of sessions. A session whose purge is queued or done is gone, for every
// storage service, whatever its watch has told it yet.
import type { ClickHouseClient } from '@clickhouse/client';
import type { Caller } from '../../bus/contracts/session.ts';
import { notFound, unlessNotFound } from '../../bus/errors.ts';
import { mayBeArchived, sessionCreatedAt } from '../../bus/ids.ts';
import type { SessionRecords } from '../../bus/session-records.ts';
import { publicRecord, type PublicRecord } from '../../bus/session-view.ts';
import type { PurgeQueue } from '../purge/purge-queue.ts';
import { latestRows } from './sessions-index.ts';

export class SessionArchive {
  constructor(
    private readonly clickhouse: ClickHouseClient,
    private readonly records: SessionRecords,
    private readonly purges: PurgeQueue,
    /** How long a record not written stays in the bucket. */
    private readonly recordMaxAgeMs: number,
  ) {}

  /** The caller's session as a read sees it: its record, or once that has aged out, its index row. */
  async owned(caller: Caller, id: string): Promise<PublicRecord> {
    const found = await this.records.owned(caller, id).catch(unlessNotFound);
    return found ? publicRecord(found.record) : (await this.archived(caller, id)).record;
  }

  /** The caller's session whose record has aged out, and its index row's revision; 404 when there is none. */
  async archived(caller: Caller, id: string): Promise<{ record: PublicRecord; revision: number }> {
    if (!mayBeArchived(id, this.recordMaxAgeMs) || this.records.deletedLately(id)) throw notFound();
    const row = (await latestRows(this.clickhouse, caller.user, [{ id, createdAt: sessionCreatedAt(id) }])).get(id);
    if (!row || (await this.purges.holds(id))) throw notFound();
    return row;
  }
}

// Who answers a session list: the newest sessions in memory when they are as new as the bucket
// and hold the page, ClickHouse otherwise. The one place that decides.
import type { ClickHouseClient } from '@clickhouse/client';
import type { JetStreamManager } from '@nats-io/jetstream';
import type { PublicRecord } from '../bus/session-view.ts';
import { buckets } from '../bus/subjects.ts';
import type { SessionListMetrics } from './metrics.ts';
import type { NewestSessions } from './newest-sessions.ts';
import { listSessions, type SessionListFilter } from './sessions-index.ts';

export class SessionLists {
  constructor(
    private readonly memory: NewestSessions,
    private readonly jsm: JetStreamManager,
    private readonly clickhouse: ClickHouseClient,
    private readonly metrics?: SessionListMetrics,
  ) {}

  async page(filter: SessionListFilter): Promise<{ records: PublicRecord[]; hasMore: boolean }> {
    // The bucket's latest revision, read after the request came: a change its caller made
    // before asking (a create, rename or stop through any host) is in memory once this is.
    const latest = (await this.jsm.streams.info(`KV_${buckets.sessions}`)).state.last_seq;
    const behind = Math.max(0, latest - this.memory.revision);
    this.metrics?.behind.set(behind);
    const remembered = behind === 0 ? this.memory.page(filter) : undefined;
    this.metrics?.pages.inc({ source: remembered ? 'memory' : 'clickhouse' });
    return remembered ?? listSessions(this.clickhouse, filter);
  }
}

// The sessions table: a copy of each session record as of its last change that a list shows
// (create, rename, state, worker state, sources), from which session lists are served (the KV
// answers for one session; this answers for millions).
import type { ClickHouseClient } from '@clickhouse/client';
import type { SessionIndexRow } from '../bus/contracts/rows.ts';
import type { ListSessionsQuery } from '../bus/contracts/session.ts';
import type { PublicRecord } from '../bus/session-view.ts';
import { queryRows } from './clickhouse.ts';
import { sql } from './sql.ts';
import { densityOf, pageFromEnd, type Span, type Window } from './windows.ts';

export async function indexSession(client: ClickHouseClient, row: SessionIndexRow): Promise<void> {
  await client.insert({ table: 'sessions', values: [row], format: 'JSONEachRow' });
}

export interface SessionListFilter extends Omit<ListSessionsQuery, 'from' | 'to'> {
  user: string;
  fromMs?: number;
  toMs?: number;
  /** Active sessions were all created after this: the list of active ones looks no further back. */
  activeSinceMs: number;
}

/**
 * Newest first (created desc, id desc), in two steps: which sessions make the page, read from
 * the newest window of the user's sessions that holds it (storage/windows.ts), then their
 * documents. Each session's latest revision is picked with argMax rather than FINAL, so a
 * filter on a changing column (state) never sees an older revision; a session's revisions share
 * its creation time, so they always fall in the same window.
 */
export async function listSessions(
  client: ClickHouseClient,
  filter: SessionListFilter,
): Promise<{ records: PublicRecord[]; hasMore: boolean }> {
  const span = await userSpan(client, filter);
  if (!span) return { records: [], hasMore: false };
  const complete = (page: Listed[]) => page.length > filter.limit;
  // The active ones are few and all lie in the span, which ends the look-back: read at once.
  const listed = filter.state === 'active'
    ? await pageIn(client, filter, span)
    : await pageFromEnd({
        span,
        from: 'hi',
        wanted: filter.offset + filter.limit + 1,
        read: (window) => pageIn(client, filter, window),
        complete,
      });
  return {
    records: listed.slice(0, filter.limit).map((row) => JSON.parse(row.doc) as PublicRecord),
    hasMore: complete(listed),
  };
}

interface Listed {
  doc: string;
}

/** The creation times that can hold a listed session, or nothing when none can. */
async function userSpan(client: ClickHouseClient, filter: SessionListFilter): Promise<Span | undefined> {
  const [found] = await queryRows<{ first: number; last: number; rows: number }>(
    client,
    sql`SELECT minMerge(first) AS first, maxMerge(last) AS last, countMerge(rows) AS rows
        FROM session_spans WHERE user = ${filter.user} GROUP BY user`,
  );
  if (!found) return undefined;
  const first = Number(found.first);
  const last = Number(found.last);
  const lo = Math.max(first, filter.fromMs ?? 0, filter.state === 'active' ? filter.activeSinceMs : 0);
  const hi = Math.min(last + 1, filter.toMs ?? Infinity);
  return hi > lo ? { lo, hi, density: densityOf(Number(found.rows), first, last) } : undefined;
}

/** Rows with `created_ms` in [lo, hi) of the user; `created`, the partition key, skips months. */
function createdIn(user: string, window: Window): string {
  const lo = Math.floor(window.lo);
  const hi = Math.ceil(window.hi);
  return sql`user = ${user}
    AND created >= toDateTime(${Math.floor(lo / 1000)}) AND created <= toDateTime(${Math.floor((hi - 1) / 1000)})
    AND created_ms >= ${lo} AND created_ms < ${hi}`;
}

/**
 * The page (and the session after it) among the user's sessions created in `window`, in one
 * query of two steps: which sessions, by their id, state and creation time alone; then the
 * documents of just those, whose granules PREWHERE picks out.
 */
function pageIn(client: ClickHouseClient, filter: SessionListFilter, window: Window): Promise<Listed[]> {
  const created = createdIn(filter.user, window);
  const type = filter.type !== undefined ? sql` AND type = ${filter.type}` : '';
  const having = filter.state !== undefined ? sql`HAVING argMax(state, revision) = ${filter.state}` : '';
  const page = `
    SELECT id, any(created_ms) AS created_at FROM sessions
    WHERE ${created}${type}
    GROUP BY id ${having}
    ORDER BY created_at DESC, id DESC
    LIMIT ${sql`${filter.offset}`}, ${sql`${filter.limit + 1}`}`;
  return queryRows<Listed>(
    client,
    `SELECT id, any(created_ms) AS created_at, argMax(doc, revision) AS doc FROM sessions
     PREWHERE id IN (SELECT id FROM (${page}))
     WHERE ${created}
     GROUP BY id
     ORDER BY created_at DESC, id DESC`,
  );
}

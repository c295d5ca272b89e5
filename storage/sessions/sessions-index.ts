// The sessions table: a copy of each session record as of its last change that a list shows
// (create, rename, state, worker state, sources), from which session lists are served (the KV
// answers for one session; this answers for millions). Kept by storage/sessions/session-index-follower.ts.
import type { ClickHouseClient } from '@clickhouse/client';
import type { ListSessionsQuery, SessionRecord } from '../../bus/contracts/session.ts';
import { publicRecord, type PublicRecord } from '../../bus/session-view.ts';
import { queryRows } from '../clickhouse/clickhouse.ts';
import { literal, sql } from '../clickhouse/sql.ts';
import { densityOf, pageFromEnd, type Span, type Window } from './windows.ts';

/** A session's row: one per revision of its record that changed something a list shows. */
export interface SessionIndexRow {
  id: string;
  user: string;
  product: string;
  name: string;
  type: string;
  state: string;
  created_ms: number;
  /** Seconds: the partition key. */
  created: number;
  /** The record's KV revision: the latest wins, and a row stored twice collapses. */
  revision: number;
  /** The public record as JSON: what the list returns. */
  doc: string;
}

export function indexRow(record: SessionRecord, revision: number): SessionIndexRow {
  return {
    id: record.id,
    user: record.user,
    product: record.product,
    name: record.name,
    type: record.type,
    state: record.state,
    created_ms: record.createdAt,
    created: Math.floor(record.createdAt / 1000),
    revision,
    doc: JSON.stringify(publicRecord(record)),
  };
}

export async function indexSessions(client: ClickHouseClient, rows: SessionIndexRow[]): Promise<void> {
  await client.insert({ table: 'sessions', values: rows, format: 'JSONEachRow' });
}

/**
 * Of each session, the latest row the index holds: its revision and what it lists. Read by id
 * among the user's rows of the sessions' creation seconds (the partition key) alone.
 */
export async function latestRows(
  client: ClickHouseClient,
  user: string,
  sessions: Pick<SessionRecord, 'id' | 'createdAt'>[],
): Promise<Map<string, { revision: number; record: PublicRecord }>> {
  const ids = [...new Set(sessions.map(({ id }) => literal(id)))].join(', ');
  const seconds = [...new Set(sessions.map(({ createdAt }) => `toDateTime(${literal(Math.floor(createdAt / 1000))})`))].join(', ');
  // Aliases apart from the columns: ClickHouse 18.16 reads a column's name as the alias of the
  // same name, and argMax(doc, revision) over a Distributed table then nests max in argMax.
  const rows = await queryRows<{ id: string; latest: number | string; latest_doc: string }>(
    client,
    `SELECT id, max(revision) AS latest, argMax(doc, revision) AS latest_doc FROM sessions
     PREWHERE id IN (${ids})
     WHERE ${sql`user = ${user}`} AND created IN (${seconds})
     GROUP BY id`,
  );
  return new Map(rows.map((row) => [row.id, { revision: Number(row.latest), record: JSON.parse(row.latest_doc) as PublicRecord }]));
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
 * the newest window of the user's sessions that holds it (storage/sessions/windows.ts), then their
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
  if (filter.state === undefined && filter.offset + filter.limit > (span.density * (span.hi - span.lo)) / 2) {
    return deepPage(client, filter, span);
  }
  const page = { offset: filter.offset, limit: filter.limit + 1, order: 'DESC' } as const;
  const complete = (listed: Listed[]) => listed.length > filter.limit;
  // The active ones are few and all lie in the span, which ends the look-back: read at once.
  const listed = filter.state === 'active'
    ? await pageIn(client, filter, span, page)
    : await pageFromEnd({
        span,
        from: 'hi',
        wanted: filter.offset + filter.limit + 1,
        read: (window) => pageIn(client, filter, window, page),
        complete,
      });
  return { records: listed.slice(0, filter.limit).map(recordOf), hasMore: complete(listed) };
}

/**
 * A page in the older half of the span, read from the oldest end: its sessions are counted
 * (ids alone, cheap), and the page is the one that many sessions from the start, reversed.
 * Only without a state filter, whose count would cost as much as the page itself.
 */
async function deepPage(client: ClickHouseClient, filter: SessionListFilter, span: Span): Promise<{ records: PublicRecord[]; hasMore: boolean }> {
  const [counted] = await queryRows<{ sessions: number }>(
    client,
    `SELECT uniqExact(id) AS sessions FROM sessions WHERE ${createdIn(filter.user, span)}${typeIs(filter)}`,
  );
  const total = Number(counted?.sessions ?? 0);
  const count = Math.min(filter.limit, total - filter.offset);
  if (count <= 0) return { records: [], hasMore: false };
  const older = total - filter.offset - count;
  const listed = await pageFromEnd({
    span,
    from: 'lo',
    wanted: older + count,
    read: (window) => pageIn(client, filter, window, { offset: older, limit: count, order: 'ASC' }),
    complete: (page) => page.length >= count,
  });
  return { records: listed.reverse().map(recordOf), hasMore: filter.offset + count < total };
}

const recordOf = (row: Listed) => JSON.parse(row.doc) as PublicRecord;

const typeIs = (filter: SessionListFilter) => (filter.type !== undefined ? sql` AND type = ${filter.type}` : '');

interface Listed {
  doc: string;
}

/**
 * The first and last creation times of the user's sessions and how many there are, as the
 * session_spans view has them. A list reads its window from them: ClickHouse fills the view
 * just after the insert into `sessions` that it follows, so for a moment the table may hold a
 * session its span does not cover yet.
 */
export async function sessionSpan(client: ClickHouseClient, user: string): Promise<{ first: number; last: number; rows: number } | undefined> {
  const [found] = await queryRows<{ first: number; last: number; rows: number }>(
    client,
    sql`SELECT minMerge(first) AS first, maxMerge(last) AS last, uniqMerge(rows) AS rows
        FROM session_spans WHERE user = ${user} GROUP BY user`,
  );
  return found && { first: Number(found.first), last: Number(found.last), rows: Number(found.rows) };
}

/** The creation times that can hold a listed session, or nothing when none can. */
async function userSpan(client: ClickHouseClient, filter: SessionListFilter): Promise<Span | undefined> {
  const found = await sessionSpan(client, filter.user);
  if (!found) return undefined;
  const { first, last } = found;
  const lo = Math.max(first, filter.fromMs ?? 0, filter.state === 'active' ? filter.activeSinceMs : 0);
  const hi = Math.min(last + 1, filter.toMs ?? Infinity);
  return hi > lo ? { lo, hi, density: densityOf(found.rows, first, last) } : undefined;
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
 * A page among the user's sessions created in `window`, newest first (DESC) or oldest first
 * (ASC), in one query of two steps: which sessions, by their id, state and creation time
 * alone; then the documents of just those, whose granules PREWHERE picks out.
 */
function pageIn(
  client: ClickHouseClient,
  filter: SessionListFilter,
  window: Window,
  { offset, limit, order }: { offset: number; limit: number; order: 'ASC' | 'DESC' },
): Promise<Listed[]> {
  const created = createdIn(filter.user, window);
  const type = typeIs(filter);
  const having = filter.state !== undefined ? sql`HAVING argMax(state, revision) = ${filter.state}` : '';
  const page = `
    SELECT id, any(created_ms) AS created_at FROM sessions
    WHERE ${created}${type}
    GROUP BY id ${having}
    ORDER BY created_at ${order}, id ${order}
    LIMIT ${sql`${offset}`}, ${sql`${limit}`}`;
  return queryRows<Listed>(
    client,
    `SELECT id, any(created_ms) AS created_at, argMax(doc, revision) AS doc FROM sessions
     PREWHERE id IN (SELECT id FROM (${page}))
     WHERE ${created}
     GROUP BY id
     ORDER BY created_at ${order}, id ${order}`,
  );
}

// The sessions table: a copy of each session record as of its last change that a list shows
// (create, rename, state, worker state, sources), from which session lists are served (the KV
// answers for one session; this answers for millions).
import type { ClickHouseClient } from '@clickhouse/client';
import type { SessionIndexRow } from '../bus/contracts/rows.ts';
import type { ListSessionsQuery } from '../bus/contracts/session.ts';
import type { PublicRecord } from '../bus/session-view.ts';
import { queryRows } from './clickhouse.ts';
import { sql } from './sql.ts';

export async function indexSession(client: ClickHouseClient, row: SessionIndexRow): Promise<void> {
  await client.insert({ table: 'sessions', values: [row], format: 'JSONEachRow' });
}

export interface SessionListFilter extends Omit<ListSessionsQuery, 'from' | 'to'> {
  user: string;
  fromMs?: number;
  toMs?: number;
}

/**
 * Newest first. Each session's latest revision is picked with argMax rather than FINAL, so a
 * filter on a changing column (state, name) never sees an older revision.
 */
export async function listSessions(
  client: ClickHouseClient,
  filter: SessionListFilter,
): Promise<{ records: PublicRecord[]; hasMore: boolean }> {
  const where = [sql`user = ${filter.user}`];
  if (filter.fromMs !== undefined) where.push(sql`created_ms >= ${filter.fromMs}`);
  if (filter.toMs !== undefined) where.push(sql`created_ms < ${filter.toMs}`);
  if (filter.type !== undefined) where.push(sql`type = ${filter.type}`);
  const having = filter.state !== undefined ? sql`HAVING latest_state = ${filter.state}` : '';
  const rows = await queryRows<{ doc: string }>(
    client,
    `SELECT id, any(created_ms) AS created, argMax(state, revision) AS latest_state, argMax(doc, revision) AS doc
     FROM sessions
     WHERE ${where.join(' AND ')}
     GROUP BY id
     ${having}
     ORDER BY created DESC, id DESC
     LIMIT ${sql`${filter.offset}`}, ${sql`${filter.limit + 1}`}`,
  );
  return {
    records: rows.slice(0, filter.limit).map((row) => JSON.parse(row.doc) as PublicRecord),
    hasMore: rows.length > filter.limit,
  };
}

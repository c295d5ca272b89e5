// A session's custom sensor events, a page at a time.
import type { ClickHouseClient } from '@clickhouse/client';
import type { ListEventsQuery, PublicEvent } from '../bus/contracts/events.ts';
import { queryRows } from './clickhouse.ts';
import { sql } from './sql.ts';

interface EventRow {
  source: string;
  user: string;
  time: number;
  text: string | null;
  value: number | null;
}

export async function listEvents(
  client: ClickHouseClient,
  session: string,
  query: ListEventsQuery,
): Promise<{ data: PublicEvent[]; hasMore: boolean }> {
  const where = [sql`session = ${session}`];
  if (query.source !== undefined) where.push(sql`source = ${query.source}`);
  if (query.from !== undefined) where.push(sql`time >= ${query.from}`);
  if (query.to !== undefined) where.push(sql`time < ${query.to}`);
  const direction = query.order === 'desc' ? 'DESC' : 'ASC';
  const rows = await queryRows<EventRow>(
    client,
    `SELECT source, user, time, text, value FROM custom_events FINAL
     WHERE ${where.join(' AND ')}
     ORDER BY time ${direction}, id ${direction}
     LIMIT ${sql`${query.offset}`}, ${sql`${query.limit + 1}`}`,
  );
  return {
    hasMore: rows.length > query.limit,
    data: rows.slice(0, query.limit).map((row) => ({
      time: Number(row.time),
      data: row.text ?? Number(row.value),
      source: row.source,
      session,
      user: row.user,
      type: 'sensor_report' as const,
    })),
  };
}

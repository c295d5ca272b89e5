// A session's custom sensor events, a page at a time, read from the window of event times at
// the page's end that holds it (storage/sessions/windows.ts): a session may hold millions of events.
import type { ClickHouseClient } from '@clickhouse/client';
import type { ListEventsQuery, PublicEvent } from '../../bus/contracts/events.ts';
import { sessionDay } from '../../bus/ids.ts';
import { queryRows } from '../clickhouse/clickhouse.ts';
import { sql } from '../clickhouse/sql.ts';
import { densityOf, pageFromEnd, type Span, type Window } from '../sessions/windows.ts';

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
  const span = await eventSpan(client, session, query);
  const rows = span
    ? await pageFromEnd({
        span,
        from: query.order === 'desc' ? 'hi' : 'lo',
        wanted: query.offset + query.limit + 1,
        read: (window) => pageIn(client, session, query, window),
        complete: (page) => page.length > query.limit,
      })
    : [];
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

/** The event times that can hold a listed event, or nothing when none can. */
async function eventSpan(client: ClickHouseClient, session: string, query: ListEventsQuery): Promise<Span | undefined> {
  const [found] = await queryRows<{ first: number; last: number; rows: number }>(
    client,
    sql`SELECT minMerge(first) AS first, maxMerge(last) AS last, uniqMerge(rows) AS rows
        FROM event_spans WHERE day = ${sessionDay(session)} AND session = ${session} GROUP BY session`,
  );
  if (!found) return undefined;
  const lo = Math.max(Number(found.first), query.from ?? 0);
  // Past the last event, which the half-open windows must include.
  const hi = Math.min(Number(found.last) + 1, query.to ?? Infinity);
  return hi > lo ? { lo, hi, density: densityOf(Number(found.rows), Number(found.first), Number(found.last)) } : undefined;
}

function pageIn(client: ClickHouseClient, session: string, query: ListEventsQuery, window: Window): Promise<EventRow[]> {
  const where = [
    sql`day = ${sessionDay(session)} AND session = ${session}`,
    sql`time >= ${window.lo} AND time < ${window.hi}`,
  ];
  if (query.source !== undefined) where.push(sql`source = ${query.source}`);
  const direction = query.order === 'desc' ? 'DESC' : 'ASC';
  return queryRows<EventRow>(
    client,
    `SELECT source, user, time, text, value FROM custom_events FINAL
     WHERE ${where.join(' AND ')}
     ORDER BY time ${direction}, id ${direction}
     LIMIT ${sql`${query.offset}`}, ${sql`${query.limit + 1}`}`,
  );
}

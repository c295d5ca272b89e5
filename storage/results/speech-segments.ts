// The transcribed segments themselves, in time order, a page at a time.
import type { ClickHouseClient } from '@clickhouse/client';
import type { SpeechSegmentsPage } from '../../bus/contracts/results.ts';
import { sessionDay } from '../../bus/ids.ts';
import { queryRows } from '../clickhouse/clickhouse.ts';
import { sql } from '../clickhouse/sql.ts';

interface SegmentRow {
  start_ms: number;
  end_ms: number;
  text: string;
  positive: number;
  neutral: number;
  negative: number;
  compound: number;
  snr_db: number | null;
}

const round = (value: number) => Math.round(value * 10_000) / 10_000;

export async function listSpeechSegments(
  client: ClickHouseClient,
  query: { session: string; start: number; end?: number; limit: number; offset: number },
): Promise<SpeechSegmentsPage> {
  const end = query.end === undefined ? '' : sql` AND start_ms < ${Math.round(query.end * 1000)}`;
  const rows = await queryRows<SegmentRow>(
    client,
    sql`SELECT start_ms, end_ms, text, positive, neutral, negative, compound, snr_db
        FROM speech_segments FINAL
        WHERE day = ${sessionDay(query.session)} AND session = ${query.session} AND start_ms >= ${Math.round(query.start * 1000)}` +
      end +
      sql` ORDER BY start_ms LIMIT ${query.offset}, ${query.limit + 1}`,
  );
  return {
    hasMore: rows.length > query.limit,
    offset: query.offset,
    limit: query.limit,
    data: rows.slice(0, query.limit).map((row) => ({
      start: Number(row.start_ms) / 1000,
      end: Number(row.end_ms) / 1000,
      text: row.text,
      sentiments: {
        positive: round(row.positive),
        neutral: round(row.neutral),
        negative: round(row.negative),
        compound: round(row.compound),
      },
      // Stored as Float32: a tenth of a dB is all the estimate means.
      ...(row.snr_db !== null && { snrDb: Math.round(Number(row.snr_db) * 10) / 10 }),
    })),
  };
}

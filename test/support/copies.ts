// Counting what is stored twice. The result tables are ReplacingMergeTree by each row's key, so
// a row stored twice is merged into one in the background, and FINAL merges it as it reads: a
// count through either can never see a doubled row. These count the rows themselves, grouped by
// the table's key, on tables whose merges are off: a ClickHouse of the test's own started with
// NO_MERGES (which, unlike SYSTEM STOP MERGES, lasts through the server's restarts: the
// service inserts as soon as a restarted server answers), or tables the test stopped with
// SYSTEM STOP MERGES.
import * as assert from 'uvu/assert';
import { queryRows, type ClickHouseClient } from '../../storage/clickhouse/clickhouse.ts';
import { sql } from '../../storage/clickhouse/sql.ts';

/**
 * A config.d file for startClickHouse: no merge is ever small enough to be chosen. Unmerged, a
 * table gains a part an insert; the limits on parts (300 refuses an insert, 150 delays it) are
 * raised so that minutes of inserts are taken as a merging server takes them.
 */
export const NO_MERGES = {
  'no-merges.xml': `<?xml version="1.0"?>
<yandex>
  <merge_tree>
    <max_bytes_to_merge_at_min_space_in_pool>1</max_bytes_to_merge_at_min_space_in_pool>
    <max_bytes_to_merge_at_max_space_in_pool>1</max_bytes_to_merge_at_max_space_in_pool>
    <parts_to_delay_insert>100000</parts_to_delay_insert>
    <parts_to_throw_insert>100000</parts_to_throw_insert>
  </merge_tree>
</yandex>
`,
};

/** Fails unless the server was started with NO_MERGES. */
export async function assertNoMerges(clickhouse: ClickHouseClient): Promise<void> {
  const [setting] = await queryRows<{ value: string }>(clickhouse,
    "SELECT value FROM system.merge_tree_settings WHERE name = 'max_bytes_to_merge_at_max_space_in_pool'");
  assert.is(setting?.value, '1', 'the server merges nothing, so a doubled row stays to be counted');
}

/** The keys of `session`'s rows in `table` stored more than once, with how many times: counted without FINAL. */
export async function storedTwice(clickhouse: ClickHouseClient, table: string, key: string[], session: string): Promise<Record<string, unknown>[]> {
  const rows = await queryRows<Record<string, unknown>>(clickhouse,
    `SELECT ${key.join(', ')}, count() AS copies FROM ${table} WHERE ${sql`session = ${session}`}
     GROUP BY ${key.join(', ')} HAVING copies > 1 ORDER BY ${key.join(', ')}`);
  return rows.map((row) => ({ ...row, copies: Number(row.copies) }));
}

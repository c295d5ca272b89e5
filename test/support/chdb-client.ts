// A current ClickHouse (26.x, embedded by chdb) behind the few calls the storage code makes
// of @clickhouse/client: query as JSONEachRow, command, insert as JSONEachRow. The same
// storage functions then run unchanged on ClickHouse 18.16 and on a current release.
import { Session } from 'chdb';
import type { ClickHouseClient } from '../../storage/clickhouse/clickhouse.ts';

export interface CurrentClickHouse {
  client: ClickHouseClient;
  version: string;
  close(): void;
}

/** A chdb session with its data under `dir`, using `database` for unqualified names once it exists. */
export function currentClickHouse(dir: string, database: string): CurrentClickHouse {
  const session = new Session(dir);
  // As the real client is configured (storage/clickhouse/clickhouse.ts): 64-bit integers as JSON numbers.
  const settings = 'SETTINGS output_format_json_quote_64bit_integers = 0';
  let databaseReady = false;
  const qualified = (query: string) => {
    if (!databaseReady) {
      databaseReady = session.query(`EXISTS DATABASE ${database}`, 'TabSeparated').trim() === '1';
      if (databaseReady) session.query(`USE ${database}`);
    }
    return query;
  };
  const run = async (query: string, format = 'TabSeparated') => (await session.queryAsync(qualified(query), { format })).text();
  const client = {
    async query({ query }: { query: string; format: 'JSONEachRow' }) {
      const text = await run(`${query} ${settings}`, 'JSONEachRow');
      return { json: async () => text.split('\n').filter(Boolean).map((line) => JSON.parse(line)) };
    },
    async command({ query }: { query: string }) {
      await run(query);
    },
    async insert({ table, values }: { table: string; values: readonly unknown[]; format: 'JSONEachRow' }) {
      await run(`INSERT INTO ${table} FORMAT JSONEachRow\n${values.map((value) => JSON.stringify(value)).join('\n')}`);
    },
    async close() {},
  };
  return {
    client: client as unknown as ClickHouseClient,
    version: session.query('SELECT version()', 'TabSeparated').trim(),
    close: () => session.cleanup(),
  };
}

// The ClickHouse client: one per process, JSON in and out, no compression (loopback and LAN).
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import type { Config } from '../bus/config.ts';

export type { ClickHouseClient };

export interface ClickHouseServer {
  url: string;
  username: string;
  password: string;
}

export function clickHouseServer(config: Pick<Config, 'clickhouseUrl' | 'clickhouseUser' | 'clickhousePassword'>): ClickHouseServer {
  return { url: config.clickhouseUrl, username: config.clickhouseUser, password: config.clickhousePassword };
}

/** `null` connects without a database: for creating it. */
export function connectClickHouse(server: ClickHouseServer, database: string | null): ClickHouseClient {
  return createClient({
    ...server,
    database: database ?? undefined,
    compression: { request: false, response: false },
    request_timeout: 30_000,
    clickhouse_settings: { output_format_json_quote_64bit_integers: 0 },
  });
}

export async function queryRows<T>(client: ClickHouseClient, query: string): Promise<T[]> {
  const result = await client.query({ query, format: 'JSONEachRow' });
  return result.json<T>();
}

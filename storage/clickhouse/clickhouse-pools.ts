// A storage service's ClickHouse clients, one per purpose, each with its own sockets: reads
// held by slow queries (a deep page runs until its deadline) wait for a read socket and never
// take the one the writer's next insert or the session index's next batch needs.
import type { Logger } from '../../bus/log.ts';
import { connectClickHouse, type ClickHouseClient, type ClickHouseServer } from './clickhouse.ts';

/** Sockets of each pool, per server (CLICKHOUSE_*_CONNECTIONS). */
export interface PoolSizes {
  reads: number;
  writer: number;
  /** The session index follower and the purges of deleted sessions. */
  index: number;
}

export interface ClickHousePools {
  reads: ClickHouseClient;
  writer: ClickHouseClient;
  index: ClickHouseClient;
}

export function connectPools(server: ClickHouseServer, database: string, sizes: PoolSizes, log: Logger): ClickHousePools {
  const pool = (purpose: keyof PoolSizes) =>
    connectClickHouse(server, database, log.child({ component: 'clickhouse', pool: purpose }), sizes[purpose]);
  return { reads: pool('reads'), writer: pool('writer'), index: pool('index') };
}

export async function closePools(pools: ClickHousePools): Promise<void> {
  await Promise.all([pools.reads.close(), pools.writer.close(), pools.index.close()]);
}

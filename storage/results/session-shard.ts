// Reads of one session's results while a shard is out of reach. A session's rows live on one
// shard (storage/results/shards.ts), yet a query of a Distributed table asks every shard and fails when
// one cannot be reached. ClickHouse 18.16 cannot leave out the shards a query does not need
// (optimize_skip_unused_shards came later), so a read that failed for want of a shard is asked
// again with skip_unavailable_shards when the session's own shard answers, and is a 503 when it
// does not: never a result with the session's rows silently missing.
import type { ClickHouseClient } from '@clickhouse/client';
import { unavailable } from '../../bus/errors.ts';
import { isShardUnreachable } from '../clickhouse/insert-errors.ts';
import { Shards } from './shards.ts';

type QueryParams = Parameters<ClickHouseClient['query']>[0];

/** `client` for the reads of `session`'s results; itself on one server. */
export function readsOfSession(client: ClickHouseClient, shards: Shards | undefined, session: string): ClickHouseClient {
  if (!shards) return client;
  return new Proxy(client, {
    get(target, property) {
      if (property === 'query') return (params: QueryParams) => query(target, shards, session, params);
      const value = Reflect.get(target, property);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

const shardLost = () => unavailable('the shard holding this session\'s results is unreachable; retry later');

async function query(client: ClickHouseClient, shards: Shards, session: string, params: QueryParams) {
  try {
    return await client.query(params);
  } catch (error) {
    if (!isShardUnreachable(error)) throw error;
  }
  try {
    const [mine, answering] = await Promise.all([shards.of([session], params.abort_signal), shards.answering(params.abort_signal)]);
    if (!answering.has(mine.get(session)!)) throw shardLost();
    return await client.query({ ...params, clickhouse_settings: { ...params.clickhouse_settings, skip_unavailable_shards: 1 } });
  } catch (error) {
    throw isShardUnreachable(error) ? shardLost() : error;
  }
}

// A read nobody waits for any more is dropped, so that one user's abandoned burst does not keep
// ClickHouse busy for everyone else. Closing the HTTP request is not enough: ClickHouse 18.16
// runs a query on after its connection closes (seen in system.processes). So each query of a
// request carries ClickHouse's own limit (max_execution_time, in whole seconds: it takes no
// fractions), a query still waiting for a connection at the deadline is dropped, and one
// running then (or sent just as it passed: a freed connection can take a queued query before
// that query's own abort fires) is killed by its query id.
//
// Each query also carries the read's ClickHouse priority (reads-in-flight.ts): ClickHouse pauses
// a query while one of a higher priority (a lower number) runs. Measured: a query beside eight
// heavy ones took 2.1-2.3 s as their equal, 0.4-0.5 s (as alone) above them.
import { randomUUID } from 'node:crypto';
import type { ClickHouseClient } from '@clickhouse/client';
import { unavailable } from '../../bus/errors.ts';
import { clickhouseCode, isShardUnreachable } from './insert-errors.ts';
import { sql } from './sql.ts';

const TIMEOUT_EXCEEDED = 159;

type QueryParams = Parameters<ClickHouseClient['query']>[0];

/** `client`, whose queries end by `deadline` (ms since the epoch) and run at `priority`; everything else unchanged. */
export function readsUntil(client: ClickHouseClient, deadline: number, priority: number): ClickHouseClient {
  return new Proxy(client, {
    get(target, property) {
      if (property === 'query') return (params: QueryParams) => boundedQuery(target, params, deadline, priority);
      const value = Reflect.get(target, property);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

const late = () => unavailable('the request timed out before its results were read; retry later');

async function boundedQuery(client: ClickHouseClient, params: QueryParams, deadline: number, priority: number) {
  const remainingMs = deadline - Date.now();
  if (remainingMs <= 0) throw late();
  const queryId = randomUUID();
  const signal = AbortSignal.timeout(remainingMs);
  const kill = () => void client.command({ query: sql`KILL QUERY WHERE query_id = ${queryId} ASYNC` }).catch(() => {});
  signal.addEventListener('abort', kill);
  try {
    return await client.query({
      ...params,
      query_id: queryId,
      abort_signal: signal,
      clickhouse_settings: { ...params.clickhouse_settings, max_execution_time: Math.ceil(remainingMs / 1000), priority: String(priority) },
    });
  } catch (error) {
    // Aborted here, or stopped by ClickHouse's limit (TIMEOUT_EXCEEDED): the caller has gone.
    if (signal.aborted || clickhouseCode(error) === TIMEOUT_EXCEEDED) throw late();
    if (isShardUnreachable(error)) throw unavailable('a ClickHouse shard this read needs is unreachable; retry later');
    throw error;
  } finally {
    signal.removeEventListener('abort', kill);
  }
}

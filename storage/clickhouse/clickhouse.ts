// A ClickHouse client: one per purpose (storage/clickhouse/clickhouse-pools.ts), JSON in and out, no
// compression (loopback and LAN).
// Several servers (a comma-separated URL) make one client that moves to the next server when
// one cannot be reached (storage/clickhouse/clickhouse-failover.ts).
import { ClickHouseLogLevel, createClient, type ClickHouseClient } from '@clickhouse/client';
import type { StorageConfig } from '../../bus/config.ts';
import type { Logger } from '../../bus/log.ts';
import { failoverClient } from './clickhouse-failover.ts';

export type { ClickHouseClient };

export interface ClickHouseServer {
  /** One URL, or several comma-separated: nodes of one cluster, tried in this order. */
  url: string;
  username: string;
  password: string;
  /** The cluster whose Distributed tables it reads and writes, if any (CLICKHOUSE_CLUSTER). */
  cluster?: string;
}

export function clickHouseServer(
  config: Pick<StorageConfig, 'clickhouseUrl' | 'clickhouseUser' | 'clickhousePassword' | 'clickhouseCluster'>,
): ClickHouseServer {
  return { url: config.clickhouseUrl, username: config.clickhouseUser, password: config.clickhousePassword, cluster: config.clickhouseCluster };
}

// On a cluster: an insert into a Distributed table returns once one replica of every shard it
// wrote to has the rows, not when they are queued on the node it was sent to, so an
// acknowledged row never waits on a node that may be lost; and a subquery of a Distributed
// table inside a query of one (a page of sessions) reads each shard's local table, which holds
// all it needs, since both are sharded alike. A node sends reads and writes to the replica of
// each shard it has failed to reach least often lately, the first in the cluster's order among
// equals (not to its own replica), so that a storage service reads back at once what it wrote
// (a rename, then the list). Except that ClickHouse 18.16 writes a shard the receiving node
// holds into its own copy: that holds for a service pointed at a first replica. Nodes may prefer
// different replicas, as each counts its own connection errors (and halves the counts only
// every 10 minutes): another node may see a row a moment later, once its partner has fetched it.
const CLUSTER_SETTINGS = {
  insert_distributed_sync: 1,
  distributed_product_mode: 'local',
  load_balancing: 'in_order',
  prefer_localhost_replica: 0,
} as const;

// How long a request may take before the client gives up on the server and tries the next.
const REQUEST_TIMEOUT_MS = 30_000;

/**
 * How long DDL ON CLUSTER waits for every node (distributed_ddl_task_timeout) before the
 * server answers DDL_TIMED_OUT: well within the client's request timeout, since a client that
 * gave up would send the statement again to the next server, which waits as long again. A
 * statement that timed out stays queued for the nodes that have not run it yet.
 */
export const DDL_WAIT_SECONDS = 20;
export const DDL_TIMED_OUT = 159;
/**
 * 18.16 has no ADD COLUMN IF NOT EXISTS: when two services migrate at once, the second ADD
 * finds the first one's column, which is what it wanted.
 */
export const COLUMN_EXISTS = 44;

/**
 * `null` connects without a database: for creating it. `connections`: the sockets it holds at
 * most to each server; a request beyond them waits for one (the library's default is 10).
 */
export function connectClickHouse(server: ClickHouseServer, database: string | null, log?: Logger, connections?: number): ClickHouseClient {
  const urls = server.url.split(',').map((url) => url.trim()).filter(Boolean);
  const clients = urls.map((url) =>
    createClient({
      url,
      username: server.username,
      password: server.password,
      database: database ?? undefined,
      compression: { request: false, response: false },
      request_timeout: REQUEST_TIMEOUT_MS,
      ...(connections === undefined ? {} : { max_open_connections: connections }),
      clickhouse_settings: { output_format_json_quote_64bit_integers: 0, ...(server.cluster ? CLUSTER_SETTINGS : {}) },
      // Every error the library would print reaches its caller, which knows whether it matters
      // (a column another service has just added, a node it moves past) and logs what does.
      log: { level: ClickHouseLogLevel.OFF },
    }),
  );
  return failoverClient(clients, (from, to, error) =>
    log?.warn({ err: error, from: urls[from], to: urls[to] }, 'ClickHouse server unreachable; moving to the next'),
  );
}

export async function queryRows<T>(client: ClickHouseClient, query: string): Promise<T[]> {
  const result = await client.query({ query, format: 'JSONEachRow' });
  return result.json<T>();
}

// Counting copies of a session's rows on a cluster started with NO_MERGES (copies.ts): on each
// node's local table, without FINAL, grouped by the row's second. A second copy is allowed only
// where the design makes one and says so: a second the actor host published twice (heard twice
// on the bus), or one a storage service logged as inserted from a redelivered message
// (storage/writer.ts, emo_rows_redelivered_total). Anywhere else, a second stored twice fails.
import { readFileSync } from 'node:fs';
import * as assert from 'uvu/assert';
import { connectClickHouse, queryRows, type ClickHouseClient } from '../../storage/clickhouse.ts';
import { sql } from '../../storage/sql.ts';
import type { ClickHouseNode } from '../../ops/stack/clickhouse-cluster.ts';
import type { ServiceProcess } from '../../ops/stack/service-process.ts';
import { waitUntil } from '../../ops/stack/process.ts';

/** Reads one node directly, not through the cluster's Distributed tables. */
export async function onNode<T>(node: ClickHouseNode, database: string, read: (direct: ClickHouseClient) => Promise<T>): Promise<T> {
  const direct = connectClickHouse({ url: node.url, username: 'default', password: '' }, database);
  try {
    return await read(direct);
  } finally {
    await direct.close();
  }
}

/** The seconds of `table` the storage services logged as inserted from redelivered messages, by session. */
export function redeliveredSeconds(storage: ServiceProcess[], table: string): Map<string, Set<number>> {
  const seconds = new Map<string, Set<number>>();
  for (const service of storage) {
    for (const line of readFileSync(service.logFile, 'utf8').split('\n')) {
      if (!line.includes('"redeliveredRows"')) continue;
      const { redeliveredRows } = JSON.parse(line) as { redeliveredRows: { table: string; session: string; second: number }[] };
      for (const row of redeliveredRows.filter((row) => row.table === table)) {
        if (!seconds.has(row.session)) seconds.set(row.session, new Set());
        seconds.get(row.session)!.add(row.second);
      }
    }
  }
  return seconds;
}

export interface StoredOnceCheck {
  database: string;
  /** Every node of the cluster: the session's shard's replicas count its copies, the others must hold none. */
  nodes: ClickHouseNode[];
  /** The shard that holds the session's rows. */
  shard: number;
  session: string;
  /** Every second the session has a row for, as read through the cluster. */
  seconds: number[];
  /** How many times each second's audio row was heard published on the bus. */
  heard: Map<number, number>;
  /** The storage services, whose logs say which rows they inserted from redelivered messages. */
  storage: ServiceProcess[];
}

/**
 * Asserts that on every replica of its shard each second of the session's audio rows is stored
 * exactly once but where the design allows a copy (a second published twice, or inserted from a
 * redelivery: then at most twice), and that no other shard holds any.
 */
export async function assertAudioStoredOnce(check: StoredOnceCheck): Promise<void> {
  const { database, session } = check;
  const replicas = check.nodes.filter((node) => node.shard === check.shard);
  const publishedTwice = [...check.heard].filter(([, times]) => times > 1).map(([second]) => second);
  const allowed = new Set([...publishedTwice, ...(redeliveredSeconds(check.storage, 'audio_seconds').get(session) ?? [])]);
  const keys = (on: ClickHouseClient) => queryRows<{ n: number }>(on, sql`SELECT uniqExact(second) AS n FROM audio_seconds_local WHERE session = ${session}`);
  // A replica may still be fetching the newest parts from its partner, or waiting out the
  // backoff of a fetch that failed while it was cut off.
  let held: number[] = [];
  await waitUntil('every replica of its shard holding every second', async () => {
    held = (await Promise.all(replicas.map((node) => onNode(node, database, keys)))).map(([row]) => Number(row?.n));
    return held.every((n) => n === check.seconds.length);
  }, 120_000).catch(async (error: Error) => {
    const queues = await Promise.all(replicas.map((node) => onNode(node, database, (on) => queryRows(on,
      sql`SELECT type, new_part_name, num_tries, last_exception FROM system.replication_queue WHERE database = ${database} AND table = 'audio_seconds_local'`))));
    throw new Error(`${error.message}: ${check.seconds.length} seconds, the replicas hold ${held.join(' and ')}; their queues: ${JSON.stringify(queues)}`);
  });
  for (const node of replicas) {
    const copies = await onNode(node, database, (on) => queryRows<{ second: number; copies: number }>(on, sql`SELECT second, count() AS copies
      FROM audio_seconds_local WHERE session = ${session} GROUP BY second HAVING copies > 1 ORDER BY second`));
    const doubled = copies.map((row) => ({ second: Number(row.second), copies: Number(row.copies) }));
    console.log(`  ${node.name}, without FINAL: ${check.seconds.length} seconds; stored more than once: [${doubled.map((row) => `${row.second} x${row.copies}`).join(', ')}]; a copy allowed at [${[...allowed].sort((a, b) => a - b).join(', ')}]`);
    assert.equal(doubled.filter((row) => !allowed.has(row.second) || row.copies > 2), [],
      `on ${node.name}, no second stored twice but one published twice or inserted from a redelivery, and none more than twice`);
  }
  for (const node of check.nodes.filter((node) => node.shard !== check.shard)) {
    const [row] = await onNode(node, database, (on) => queryRows<{ n: number }>(on, sql`SELECT count() AS n FROM audio_seconds_local WHERE session = ${session}`));
    assert.is(Number(row?.n), 0, `no row of ${session} on ${node.name}, another shard's`);
  }
}

/** Merges are off on every node: a doubled row stays to be counted. */
export async function assertNoMergesOnCluster(nodes: ClickHouseNode[], database: string): Promise<void> {
  for (const node of nodes) {
    const [setting] = await onNode(node, database, (on) => queryRows<{ value: string }>(on,
      "SELECT value FROM system.merge_tree_settings WHERE name = 'max_bytes_to_merge_at_max_space_in_pool'"));
    assert.is(setting?.value, '1', `${node.name} merges nothing`);
  }
}

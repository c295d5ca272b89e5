// Counting copies of a session's rows on a cluster started with NO_MERGES (copies.ts): on each
// node's local table, without FINAL, grouped by the row's second. A second copy is allowed only
// where the design makes one and says so: a second the actor host published twice (heard twice
// on the bus), or one a storage service logged as inserted from a redelivered message
// (storage/writer/writer.ts, emo_rows_redelivered_total). A copy in a part ZooKeeper does not
// know is not the table's: an insert whose commit was cut off (ClickHouse answered "unknown
// status", emo_rows_unknown_status_total, or the writer lost the node mid-insert to a kill or
// a partition) left it on one replica, the writer's retry stored the rows again, and ClickHouse
// removes such a part within five minutes or when the server starts. Anywhere else, a second
// stored twice fails.
import { readFileSync } from 'node:fs';
import * as assert from 'uvu/assert';
import { connectClickHouse, queryRows, type ClickHouseClient } from '../../storage/clickhouse/clickhouse.ts';
import { sql } from '../../storage/clickhouse/sql.ts';
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

/**
 * The seconds of `table` the storage services' logs name under `key`, by session:
 * `redeliveredRows`, rows inserted from redelivered messages; `unknownStatusRows`, rows of
 * inserts ClickHouse answered "unknown status" (storage/writer/writer.ts).
 */
export function loggedSeconds(logFiles: string[], table: string, key: 'redeliveredRows' | 'unknownStatusRows'): Map<string, Set<number>> {
  const seconds = new Map<string, Set<number>>();
  for (const logFile of logFiles) {
    for (const line of readFileSync(logFile, 'utf8').split('\n')) {
      if (!line.includes(`"${key}"`)) continue;
      const entry = JSON.parse(line) as Record<string, unknown> & { table?: string };
      const rows = entry[key] as { table?: string; session: string; second: number }[];
      for (const row of rows.filter((row) => (row.table ?? entry.table) === table)) {
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
 * redelivery: then at most twice; a copy in a part ZooKeeper does not know is not counted), and
 * that no other shard holds any.
 */
export async function assertAudioStoredOnce(check: StoredOnceCheck): Promise<void> {
  const { database, session } = check;
  const replicas = check.nodes.filter((node) => node.shard === check.shard);
  const publishedTwice = [...check.heard].filter(([, times]) => times > 1).map(([second]) => second);
  const allowed = new Set([...publishedTwice, ...(loggedSeconds(check.storage.map((service) => service.logFile), 'audio_seconds', 'redeliveredRows').get(session) ?? [])]);
  const keys = (on: ClickHouseClient) => queryRows<{ n: number }>(on, sql`SELECT uniqExact(second) AS n FROM audio_seconds_local WHERE session = ${session}`);
  // A replica may still be fetching the newest parts from its partner, or waiting out the
  // backoff of a fetch that failed while it was cut off. A session's last row may land after
  // its seconds were read: the replicas then agree on one more.
  let held: number[] = [];
  await waitUntil('every replica of its shard holding every second', async () => {
    held = (await Promise.all(replicas.map((node) => onNode(node, database, keys)))).map(([row]) => Number(row?.n));
    return held.every((n) => n === held[0] && n >= check.seconds.length);
  }, 120_000).catch(async (error: Error) => {
    const queues = await Promise.all(replicas.map((node) => onNode(node, database, (on) => queryRows(on,
      sql`SELECT type, new_part_name, num_tries, last_exception FROM system.replication_queue WHERE database = ${database} AND table = 'audio_seconds_local'`))));
    throw new Error(`${error.message}: ${check.seconds.length} seconds, the replicas hold ${held.join(' and ')}; their queues: ${JSON.stringify(queues)}`);
  });
  for (const node of replicas) {
    const copies = await onNode(node, database, (on) => queryRows<{ second: number; parts: string[] }>(on, sql`SELECT second, groupArray(_part) AS parts
      FROM audio_seconds_local WHERE session = ${session} GROUP BY second HAVING length(parts) > 1 ORDER BY second`));
    const orphans = new Set(await partsUnknownToZooKeeper(node, database, 'audio_seconds_local'));
    const doubled = copies.map((row) => ({ second: Number(row.second), copies: row.parts.length, orphans: row.parts.filter((part) => orphans.has(part)).length }));
    // The copies ZooKeeper knows are counted, a redelivery's among them; one in a part it does
    // not know is left by a commit cut off, beside the retry's, until ClickHouse removes it.
    const kept = (row: (typeof doubled)[number]) => row.copies - row.orphans;
    console.log(`  ${node.name}, without FINAL: ${check.seconds.length} seconds; stored more than once: [${doubled.map((row) => `${row.second} x${row.copies}${row.orphans ? ` (${row.orphans} in a part ZooKeeper does not know)` : ''}`).join(', ')}]; a copy allowed at [${[...allowed].sort((a, b) => a - b).join(', ')}]`);
    assert.equal(doubled.filter((row) => kept(row) > (allowed.has(row.second) ? 2 : 1)), [],
      `on ${node.name}, no second stored twice (beside a part ZooKeeper does not know) but one published twice or inserted from a redelivery; none more than twice`);
  }
  for (const node of check.nodes.filter((node) => node.shard !== check.shard)) {
    const [row] = await onNode(node, database, (on) => queryRows<{ n: number }>(on, sql`SELECT count() AS n FROM audio_seconds_local WHERE session = ${session}`));
    assert.is(Number(row?.n), 0, `no row of ${session} on ${node.name}, another shard's`);
  }
}

/**
 * The active parts of `table` on `node` that ZooKeeper does not list for its replica: an insert
 * whose commit was cut off left it on the disk, with its rows (unless its retry was recognised)
 * also in the part the retry made. ClickHouse removes such a part five minutes after it was
 * written, or when the server starts.
 */
export async function partsUnknownToZooKeeper(node: ClickHouseNode, database: string, table: string): Promise<string[]> {
  return await onNode(node, database, async (on) => {
    const [replica] = await queryRows<{ replica_path: string }>(on, sql`SELECT replica_path FROM system.replicas WHERE database = ${database} AND table = ${table}`);
    if (!replica) throw new Error(`${table} is not a replicated table on ${node.name}`);
    const known = new Set((await queryRows<{ name: string }>(on, sql`SELECT name FROM system.zookeeper WHERE path = ${`${replica.replica_path}/parts`}`)).map((row) => row.name));
    const active = await queryRows<{ name: string }>(on, sql`SELECT name FROM system.parts WHERE database = ${database} AND table = ${table} AND active`);
    return active.map((part) => part.name).filter((name) => !known.has(name));
  });
}

/** Merges are off on every node: a doubled row stays to be counted. */
export async function assertNoMergesOnCluster(nodes: ClickHouseNode[], database: string): Promise<void> {
  for (const node of nodes) {
    const [setting] = await onNode(node, database, (on) => queryRows<{ value: string }>(on,
      "SELECT value FROM system.merge_tree_settings WHERE name = 'max_bytes_to_merge_at_max_space_in_pool'"));
    assert.is(setting?.value, '1', `${node.name} merges nothing`);
  }
}

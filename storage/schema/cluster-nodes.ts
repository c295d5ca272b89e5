// The cluster as one storage service knows it: the nodes of CLICKHOUSE_URL, each asked which
// shard it serves (its `shard` macro). An ALTER of a replicated table (a column added, a
// session's rows deleted) goes straight to one live replica of each shard, not ON CLUSTER:
// ZooKeeper carries it to the shard's other replicas, and one that is down takes it when it is
// back. ClickHouse 18.16's DDL worker lets one replica of a shard run such an ALTER, picked
// with a ZooKeeper lock, but checks whether one already ran it only before taking the lock;
// when both replicas run it, the second cannot mark it done and its DDL worker stops for good.
// When the nodes known here leave a shard without one that answers, the caller goes
// ON CLUSTER instead: the DDL queue reaches every node.
import { setTimeout as sleep } from 'node:timers/promises';
import { COLUMN_EXISTS, connectClickHouse, DDL_WAIT_SECONDS, queryRows, type ClickHouseClient, type ClickHouseServer } from '../clickhouse/clickhouse.ts';
import { isConnectionError } from '../clickhouse/clickhouse-failover.ts';
import { clickhouseCode } from '../clickhouse/insert-errors.ts';
import { alterQuery, type TableAlter } from './schema.ts';
import { sql } from '../clickhouse/sql.ts';

// A node that does not say which shard it serves this soon is passed over (a stalled one
// would hold the request until the client's timeout).
const ASK_MS = 5000;
const POLL_MS = 200;
// 18.16's answer to an ALTER of a replicated table that some replica has not applied within
// replication_alter_columns_timeout: it applies it later.
const ALTER_UNFINISHED = 341;

export class ClusterNodes {
  private constructor(
    readonly name: string,
    private readonly nodes: ClickHouseClient[],
  ) {}

  /** Nothing for one server. */
  static connect(server: ClickHouseServer): ClusterNodes | undefined {
    if (!server.cluster) return undefined;
    const urls = server.url.split(',').map((url) => url.trim()).filter(Boolean);
    return new ClusterNodes(server.cluster, urls.map((url) => connectClickHouse({ ...server, url }, null)));
  }

  /**
   * Runs the ALTERs, all at once, on one replica of each shard: the first node known here that
   * takes each. With `replicasBy`, also waits until then for every replica of each shard to have
   * the tables' new columns (a migration must not be recorded before a node that takes rows has
   * them). False, and nothing sent, when some shard has no node known here that answers.
   */
  async alterEachShard(alters: TableAlter[], replicasBy?: number): Promise<boolean> {
    const shards = await this.liveReplicasByShard();
    if (!shards) return false;
    await Promise.all(shards.flatMap((replicas) => alters.map((alter) => alterShard(replicas, alter, replicasBy))));
    return true;
  }

  async close(): Promise<void> {
    await Promise.all(this.nodes.map((node) => node.close()));
  }

  private async liveReplicasByShard(): Promise<ClickHouseClient[][] | undefined> {
    const answers = await Promise.all(this.nodes.map(async (node) => {
      try {
        const [row] = await node.query({
          query: sql`SELECT (SELECT any(substitution) FROM system.macros WHERE macro = 'shard') AS shard,
            (SELECT uniqExact(shard_num) FROM system.clusters WHERE cluster = ${this.name}) AS shards`,
          format: 'JSONEachRow',
          abort_signal: AbortSignal.timeout(ASK_MS),
        }).then((result) => result.json<{ shard: string; shards: number }>());
        return row && { node, shard: row.shard, shards: Number(row.shards) };
      } catch {
        return undefined;
      }
    }));
    const byShard = new Map<string, ClickHouseClient[]>();
    let shards = 0;
    for (const answer of answers) {
      if (!answer) continue;
      byShard.set(answer.shard, [...(byShard.get(answer.shard) ?? []), answer.node]);
      shards = answer.shards;
    }
    return shards > 0 && byShard.size === shards ? [...byShard.values()] : undefined;
  }
}

async function alterShard(replicas: ClickHouseClient[], alter: TableAlter, replicasBy?: number): Promise<void> {
  for (const [i, node] of replicas.entries()) {
    try {
      await node.command({
        query: alterQuery(alter),
        clickhouse_settings: { replication_alter_columns_timeout: String(DDL_WAIT_SECONDS) },
      });
    } catch (error) {
      if (isConnectionError(error) && i < replicas.length - 1) continue;
      const code = clickhouseCode(error);
      if (code !== ALTER_UNFINISHED && code !== COLUMN_EXISTS) throw error;
    }
    if (replicasBy !== undefined) await replicasApplied(node, alter, replicasBy);
    return;
  }
}

/** Each replica records in ZooKeeper the columns it has; the table's are beside them. */
async function replicasApplied(node: ClickHouseClient, alter: TableAlter, until: number): Promise<void> {
  const name = `${alter.database}.${alter.table}`;
  const [table] = await queryRows<{ path: string }>(node,
    sql`SELECT zookeeper_path AS path FROM system.replicas WHERE database = ${alter.database} AND table = ${alter.table}`);
  if (!table) throw new Error(`${name} is not a replicated table`);
  const columns = async (path: string) =>
    (await queryRows<{ value: string }>(node, sql`SELECT value FROM system.zookeeper WHERE path = ${path} AND name = 'columns'`))[0]?.value;
  const replicas = (await queryRows<{ name: string }>(node, sql`SELECT name FROM system.zookeeper WHERE path = ${`${table.path}/replicas`}`))
    .map((replica) => replica.name);
  for (;;) {
    const wanted = await columns(table.path);
    const behind: string[] = [];
    for (const replica of replicas) {
      if ((await columns(`${table.path}/replicas/${replica}`)) !== wanted) behind.push(replica);
    }
    if (behind.length === 0) return;
    if (Date.now() >= until) {
      // Seen with 18.16: a replica whose ZooKeeper session lapsed while the change was made never
      // applies it by itself; re-attaching its table does (ops/production/DEPLOYMENT.md).
      throw new Error(`replica ${behind.join(', ')} of ${name} has not applied "${alter.clause.trim()}": ` +
        `if it is up, run DETACH TABLE ${name} and then ATTACH TABLE ${name} on it, or restart its server`);
    }
    await sleep(POLL_MS);
  }
}

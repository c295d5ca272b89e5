// Where the tables live, and the DDL that puts them there. On one server each table is just
// itself. On a cluster (CLICKHOUSE_CLUSTER, a name in the servers' remote_servers) each table is
// `<name>_local` on every node, in the Replicated variant of its engine (the replicas of a shard
// share a ZooKeeper path), under a Distributed table `<name>` on every node that spreads rows
// over the shards and reads them back; every query reads and writes `<name>` either way.
// DDL runs ON CLUSTER: the servers' distributed_ddl queue carries it to every node, also to one
// that is down when it is issued, once it is back.

export interface TableSpec {
  name: string;
  /** The column list, without parentheses. */
  columns: string;
  /** The engine on one server: `ReplacingMergeTree(revision)`, `AggregatingMergeTree()`. */
  engine: string;
  /** What follows the engine: PARTITION BY, ORDER BY. */
  keys: string;
  /**
   * What picks a row's shard. Rows that FINAL, a GROUP BY or an IN must see together share it.
   * Absent: every node holds every row (one replicated table across the cluster, read locally).
   */
  shardBy?: string;
}

export class Schema {
  readonly db: string;

  constructor(database: string, readonly cluster?: string) {
    this.db = identifier(database);
    if (cluster !== undefined) identifier(cluster);
  }

  /** ` ON CLUSTER <name>`, or nothing on one server: for DDL written out in a migration. */
  get onCluster(): string {
    return this.cluster ? ` ON CLUSTER ${this.cluster}` : '';
  }

  /** The table that holds a node's own rows: what a materialized view reads and feeds, what ALTER changes. */
  local(name: string): string {
    return this.cluster ? `${this.db}.${name}_local` : `${this.db}.${name}`;
  }

  createDatabase(): string {
    return `CREATE DATABASE IF NOT EXISTS ${this.db}${this.onCluster}`;
  }

  createTable(spec: TableSpec): string[] {
    const { name, columns, engine, keys, shardBy } = spec;
    if (!this.cluster) return [`CREATE TABLE IF NOT EXISTS ${this.db}.${name} (${columns}) ENGINE = ${engine} ${keys}`];
    if (shardBy === undefined) {
      return [`CREATE TABLE IF NOT EXISTS ${this.db}.${name}${this.onCluster} (${columns})
        ENGINE = ${replicated(engine, `/clickhouse/tables/all/${this.db}/${name}`)} ${keys}`];
    }
    return [
      `CREATE TABLE IF NOT EXISTS ${this.local(name)}${this.onCluster} (${columns})
        ENGINE = ${replicated(engine, `/clickhouse/tables/{shard}/${this.db}/${name}`)} ${keys}`,
      this.distributed(name, shardBy),
    ];
  }

  private distributed(name: string, shardBy: string): string {
    return `CREATE TABLE IF NOT EXISTS ${this.db}.${name}${this.onCluster} AS ${this.local(name)}
      ENGINE = Distributed(${this.cluster}, ${this.db}, ${name}_local, ${shardBy})`;
  }

  /**
   * An ALTER of a table's columns (`ADD COLUMN x Float32 DEFAULT 0`). On a cluster the local
   * tables change (one replica per shard runs it, ZooKeeper carries it to the others, and it
   * returns once every live replica has it); the Distributed table, which keeps a column list
   * of its own but takes no ALTER ON CLUSTER in 18.16 ("isn't replicated, but shard is"), is
   * made again from them: it holds no rows, only a moment's reads fail meanwhile.
   */
  alter(table: { name: string; shardBy: string }, clause: string): string[] {
    const { name, shardBy } = table;
    if (!this.cluster) return [`ALTER TABLE ${this.db}.${name} ${clause}`];
    return [
      `ALTER TABLE ${this.local(name)}${this.onCluster} ${clause}`,
      `DROP TABLE IF EXISTS ${this.db}.${name}${this.onCluster}`,
      this.distributed(name, shardBy),
    ];
  }

  /**
   * Removes rows (a mutation). A Distributed table takes none, so on a cluster the local tables
   * are changed: one replica of each shard runs it, ZooKeeper carries it to the others.
   */
  deleteWhere(name: string, where: string): string {
    return this.cluster
      ? `ALTER TABLE ${this.local(name)}${this.onCluster} DELETE WHERE ${where}`
      : `ALTER TABLE ${name} DELETE WHERE ${where}`;
  }
}

/** `ReplacingMergeTree(revision)` -> `ReplicatedReplacingMergeTree('<path>', '{replica}', revision)`. */
function replicated(engine: string, path: string): string {
  const match = /^(\w+)\((.*)\)$/.exec(engine);
  if (!match) throw new Error(`not an engine with arguments: ${engine}`);
  const args = [`'${path}'`, `'{replica}'`, ...(match[2]!.trim() ? [match[2]!.trim()] : [])];
  return `Replicated${match[1]}(${args.join(', ')})`;
}

function identifier(name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`not a valid ClickHouse identifier: ${name}`);
  return name;
}

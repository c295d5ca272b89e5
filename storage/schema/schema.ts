// Where the tables live, and the DDL that puts them there. On one server each table is just
// itself. On a cluster (CLICKHOUSE_CLUSTER, a name in the servers' remote_servers) each table is
// `<name>_local` on every node, in the Replicated variant of its engine (the replicas of a shard
// share a ZooKeeper path), under a Distributed table `<name>` on every node that spreads rows
// over the shards and reads them back; every query reads and writes `<name>` either way.
// DDL runs ON CLUSTER: the servers' distributed_ddl queue carries it to every node, also to one
// that is down when it is issued, once it is back; except an ALTER of a table that holds rows,
// which goes to one replica of each shard where it can (storage/schema/cluster-nodes.ts).

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

/** An ALTER of a table that holds rows: `<name>_local` on a cluster. */
export interface TableAlter {
  database: string;
  table: string;
  /** What follows the table: `ADD COLUMN x UInt8`, `DELETE WHERE ...`. */
  clause: string;
}

/** A statement of a migration: DDL as written, or an ALTER whose place depends on the nodes. */
export type Statement = string | TableAlter;

/** The ALTER as SQL; `onCluster` (` ON CLUSTER <name>`) has the DDL queue take it to every node. */
export function alterQuery(alter: TableAlter, onCluster = ''): string {
  return `ALTER TABLE ${alter.database}.${alter.table}${onCluster} ${alter.clause}`;
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
   * tables change (on one replica of each shard, which ZooKeeper carries to the others); the
   * Distributed table, which keeps a column list of its own but takes no ALTER ON CLUSTER in
   * 18.16 ("isn't replicated, but shard is"), is made again from them: it holds no rows, only a
   * moment's reads fail meanwhile.
   */
  alter(table: { name: string; shardBy: string }, clause: string): Statement[] {
    const { name, shardBy } = table;
    const change = this.tableAlter(name, clause);
    if (!this.cluster) return [change];
    return [change, `DROP TABLE IF EXISTS ${this.db}.${name}${this.onCluster}`, this.distributed(name, shardBy)];
  }

  /** Removes rows (a mutation). A Distributed table takes none: on a cluster the local tables do. */
  deleteWhere(name: string, where: string): TableAlter {
    return this.tableAlter(name, `DELETE WHERE ${where}`);
  }

  /** The ALTER as one statement: ON CLUSTER on a cluster, which the DDL queue takes to every node. */
  onEveryNode(alter: TableAlter): string {
    return alterQuery(alter, this.onCluster);
  }

  private tableAlter(name: string, clause: string): TableAlter {
    return { database: this.db, table: this.cluster ? `${name}_local` : name, clause };
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

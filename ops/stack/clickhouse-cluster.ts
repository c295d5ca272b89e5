// A ClickHouse cluster on loopback: shards x replicas servers, one folder each, coordinated by
// a ZooKeeper ensemble of three. A node of either can be killed and started again on the same
// data, to rejoin and catch up. A node whose DDL worker stops is restarted (ddl-worker-watch.ts).
// Its users are production's (ops/production/clickhouse/users.d), with passwords of its own:
// the service runs as `emo`, the nodes query each other as `cluster`, analysts read as `analyst`,
// and `default` is left to this machine, as in production.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startClickHouse, type ClusterMembership } from './clickhouse.ts';
import { freePort } from './ports.ts';
import { makeCgroup, type Cgroup } from './cgroups.ts';
import { clusterNode, type ClusterNode } from './cluster-node.ts';
import { restartOnStoppedDdlWorker } from './ddl-worker-watch.ts';
import { startZooKeeperEnsemble, type ZooKeeperEnsemble, type ZooKeeperMember } from './zookeeper-ensemble.ts';

export interface ClickHouseNode extends ClusterNode {
  /** clickhouse-<shard>-<replica>, also its {replica} macro: unique in the cluster. */
  name: string;
  shard: number;
  replica: number;
  /** Its HTTP endpoint, what CLICKHOUSE_URL takes. */
  url: string;
  tcpPort: number;
  /** Where its partner replica fetches parts from it. */
  interserverPort: number;
  /** The cgroup it runs in, where cgroup v2 can be used: everything it sends can be cut off. */
  cgroup?: Cgroup;
}

export interface ClickHouseUser {
  username: string;
  password: string;
}

export interface ClickHouseCluster {
  /** The cluster's name in remote_servers: what CLICKHOUSE_CLUSTER takes. */
  name: string;
  /** The shipped users, each with this cluster's password. */
  users: { service: ClickHouseUser; analyst: ClickHouseUser };
  /** What a storage service needs to use it: where, which cluster, as whom. */
  serviceEnv: NodeJS.ProcessEnv;
  nodes: ClickHouseNode[];
  /** Every node's HTTP endpoint, shard by shard. */
  urls: string[];
  zookeeper: ZooKeeperEnsemble;
  stop(): Promise<void>;
}

export interface ClickHouseClusterOptions {
  dir: string;
  name: string;
  shards: number;
  replicas: number;
  /** Files merged over every node's generated config (its config.d), by name. */
  configFiles?: Record<string, string>;
  /** Where a node reaches ZooKeeper, if not at the ensemble's members: a test's proxy in front of them. */
  zookeeperFor?: (node: { name: string; shard: number; replica: number }, members: ZooKeeperMember[]) => Promise<{ host: string; port: number }[]>;
}

const SHIPPED_USERS = readFileSync(new URL('../production/clickhouse/users.d/users.xml', import.meta.url), 'utf8');

export async function startClickHouseCluster(options: ClickHouseClusterOptions): Promise<ClickHouseCluster> {
  const password = () => randomBytes(12).toString('hex');
  const passwords = { CLICKHOUSE_SERVICE_PASSWORD: password(), CLICKHOUSE_ANALYST_PASSWORD: password(), CLICKHOUSE_CLUSTER_PASSWORD: password() };
  const users = {
    service: { username: 'emo', password: passwords.CLICKHOUSE_SERVICE_PASSWORD },
    analyst: { username: 'analyst', password: passwords.CLICKHOUSE_ANALYST_PASSWORD },
  };
  const zookeeper = await startZooKeeperEnsemble({ dir: join(options.dir, 'zookeeper') });
  const places: { shard: number; replica: number }[] = [];
  for (let shard = 1; shard <= options.shards; shard++) {
    for (let replica = 1; replica <= options.replicas; replica++) places.push({ shard, replica });
  }
  const ports = await Promise.all(
    places.map(async () => ({ http: await freePort(), tcp: await freePort(), interserver: await freePort() })),
  );
  const shards = Array.from({ length: options.shards }, (_, i) =>
    ports.filter((_, n) => places[n]!.shard === i + 1).map((port) => port.tcp),
  );
  const nodes = await Promise.all(places.map(async ({ shard, replica }, n) => {
    const name = `clickhouse-${shard}-${replica}`;
    const members = zookeeper.members.map(({ host, port }) => ({ host, port }));
    return clickHouseNode({
      name,
      shard,
      replica,
      dir: join(options.dir, name),
      httpPort: ports[n]!.http,
      tcpPort: ports[n]!.tcp,
      configFiles: options.configFiles,
      userFiles: { 'users.xml': SHIPPED_USERS },
      env: { ...process.env, ...passwords },
      cluster: {
        name: options.name,
        shards,
        shard: String(shard),
        replica: name,
        interserverPort: ports[n]!.interserver,
        zookeeper: options.zookeeperFor ? await options.zookeeperFor({ name, shard, replica }, zookeeper.members) : members,
      },
    });
  }));
  const watches = nodes.map((node) => restartOnStoppedDdlWorker(node, join(options.dir, node.name, 'server.err.log'), (message) => console.error(message)));
  const stop = async () => {
    for (const watch of watches) watch.stop();
    await Promise.all(nodes.map((node) => node.stop()));
    for (const node of nodes) node.cgroup?.remove();
    await zookeeper.stop();
  };
  try {
    await Promise.all(nodes.map((node) => node.start()));
  } catch (error) {
    await stop();
    throw error;
  }
  const urls = nodes.map((node) => node.url);
  const serviceEnv = {
    CLICKHOUSE_URL: urls.join(','),
    CLICKHOUSE_CLUSTER: options.name,
    CLICKHOUSE_USER: users.service.username,
    CLICKHOUSE_PASSWORD: users.service.password,
  };
  return { name: options.name, users, serviceEnv, nodes, urls, zookeeper, stop };
}

function clickHouseNode(options: {
  name: string;
  shard: number;
  replica: number;
  dir: string;
  httpPort: number;
  tcpPort: number;
  configFiles?: Record<string, string>;
  userFiles: Record<string, string>;
  env: NodeJS.ProcessEnv;
  cluster: ClusterMembership;
}): ClickHouseNode {
  const { name, shard, replica, dir, httpPort, tcpPort, configFiles, userFiles, env, cluster } = options;
  const cgroup = makeCgroup(name);
  return {
    ...clusterNode(name, () => startClickHouse({ dir, httpPort, tcpPort, configFiles, userFiles, env, cluster, cgroupDir: cgroup?.dir })),
    cgroup,
    shard,
    replica,
    tcpPort,
    interserverPort: cluster.interserverPort,
    url: `http://127.0.0.1:${httpPort}`,
  };
}

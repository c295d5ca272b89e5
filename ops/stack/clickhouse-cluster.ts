// A ClickHouse cluster on loopback: shards x replicas servers, one folder each, coordinated by
// one ZooKeeper. A node can be killed and started again on the same data, to rejoin and catch
// up from its replica.
import { join } from 'node:path';
import { startClickHouse, type ClusterMembership } from './clickhouse.ts';
import { freePort } from './ports.ts';
import type { Service } from './process.ts';
import { startZooKeeper, type ZooKeeper } from './zookeeper.ts';

export interface ClickHouseNode {
  /** clickhouse-<shard>-<replica>, also its {replica} macro: unique in the cluster. */
  name: string;
  shard: number;
  replica: number;
  /** Its HTTP endpoint, what CLICKHOUSE_URL takes. */
  url: string;
  tcpPort: number;
  /** SIGKILL, as a machine lost: nothing flushed, nothing said to the others. */
  kill(): Promise<void>;
  /** Starts it again on the same data; resolves once it answers. */
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Resolves when the running process exits. */
  exited(): Promise<unknown>;
}

export interface ClickHouseCluster {
  /** The cluster's name in remote_servers: what CLICKHOUSE_CLUSTER takes. */
  name: string;
  nodes: ClickHouseNode[];
  /** Every node's HTTP endpoint, shard by shard. */
  urls: string[];
  zookeeper: ZooKeeper;
  stop(): Promise<void>;
}

export interface ClickHouseClusterOptions {
  dir: string;
  name: string;
  shards: number;
  replicas: number;
}

export async function startClickHouseCluster(options: ClickHouseClusterOptions): Promise<ClickHouseCluster> {
  const zookeeper = await startZooKeeper({ dir: join(options.dir, 'zookeeper'), port: await freePort() });
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
  const nodes = places.map(({ shard, replica }, n) => {
    const name = `clickhouse-${shard}-${replica}`;
    return clusterNode({
      name,
      shard,
      replica,
      dir: join(options.dir, name),
      httpPort: ports[n]!.http,
      tcpPort: ports[n]!.tcp,
      cluster: {
        name: options.name,
        shards,
        shard: String(shard),
        replica: name,
        interserverPort: ports[n]!.interserver,
        zookeeper: { host: zookeeper.host, port: zookeeper.port },
      },
    });
  });
  const stop = async () => {
    await Promise.all(nodes.map((node) => node.stop()));
    await zookeeper.stop();
  };
  try {
    await Promise.all(nodes.map((node) => node.start()));
  } catch (error) {
    await stop();
    throw error;
  }
  return { name: options.name, nodes, urls: nodes.map((node) => node.url), zookeeper, stop };
}

function clusterNode(options: {
  name: string;
  shard: number;
  replica: number;
  dir: string;
  httpPort: number;
  tcpPort: number;
  cluster: ClusterMembership;
}): ClickHouseNode {
  let service: Service | undefined;
  const { name, shard, replica, tcpPort } = options;
  return {
    name,
    shard,
    replica,
    tcpPort,
    url: `http://127.0.0.1:${options.httpPort}`,
    start: async () => {
      if (service) return;
      const { dir, httpPort, cluster } = options;
      service = await startClickHouse({ dir, httpPort, tcpPort, cluster });
    },
    stop: async () => {
      await service?.stop();
      service = undefined;
    },
    kill: async () => {
      if (!service) return;
      process.kill(-service.pid, 'SIGKILL');
      await service.exited;
      service = undefined;
    },
    exited: () => service?.exited ?? Promise.resolve(null),
  };
}

// The whole service as a small cluster on this machine's loopback: three NATS servers in one
// JetStream cluster (streams and buckets with three replicas), ClickHouse as two shards of two
// replicas under a ZooKeeper ensemble of three, and two of each service process: storage
// services, actor hosts and gateways. Used by `npm run cluster` and by the node-loss tests.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { startClickHouseCluster, type ClickHouseCluster } from './clickhouse-cluster.ts';
import { startNatsCluster, type NatsCluster } from './nats-cluster.ts';
import { freePort } from './ports.ts';
import { serviceProcess, type Role, type ServiceProcess } from './service-process.ts';

export interface ClusterOptions {
  dir: string;
  projectRoot: string;
  /** The services' environment: tokens, limits; the cluster adds where NATS and ClickHouse are. */
  env: NodeJS.ProcessEnv;
  /** The first gateway's port (the second takes the next); free ones when absent. */
  gatewayPort?: number;
  /** Files merged over every ClickHouse node's config (its config.d), by name. */
  clickhouseConfigFiles?: Record<string, string>;
}

export interface GatewayInCluster extends ServiceProcess {
  baseUrl: string;
}

export interface Cluster {
  nats: NatsCluster;
  clickhouse: ClickHouseCluster;
  storage: ServiceProcess[];
  hosts: ServiceProcess[];
  gateways: GatewayInCluster[];
  /** What a process needs to join this cluster (NATS_URL, CLICKHOUSE_URL...). */
  env: NodeJS.ProcessEnv;
  stop(): Promise<void>;
}

const EACH = 2;

export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  mkdirSync(options.dir, { recursive: true });
  const [nats, clickhouse] = await Promise.all([
    startNatsCluster({ dir: join(options.dir, 'nats') }),
    startClickHouseCluster({ dir: join(options.dir, 'clickhouse'), name: 'emo', shards: 2, replicas: 2, configFiles: options.clickhouseConfigFiles }),
  ]);
  const env: NodeJS.ProcessEnv = {
    ...options.env,
    NATS_URL: nats.url,
    NATS_REPLICAS: '3',
    ...clickhouse.serviceEnv,
  };
  const all: ServiceProcess[] = [];
  const stop = async () => {
    // Gateways first, storage last: nothing is left writing to a service already gone.
    for (const role of ['gateway', 'host', 'storage'] as Role[]) {
      await Promise.all(all.filter((member) => member.role === role).map((member) => member.stop()));
    }
    await Promise.all([nats.stop(), clickhouse.stop()]);
  };
  const make = async (role: Role, index: number, extra: NodeJS.ProcessEnv = {}) => {
    const id = `cluster-${role}-${index + 1}`;
    const member = serviceProcess({
      id,
      role,
      projectRoot: options.projectRoot,
      logFile: join(options.dir, `${id}.log`),
      env: { ...env, ...extra },
      metricsPort: await freePort(),
    });
    all.push(member);
    return member;
  };
  try {
    const storage: ServiceProcess[] = [];
    for (let i = 0; i < EACH; i++) {
      // Each storage service prefers another shard's first replica, the copy every service
      // reads, so what it writes is read at once (docs/analysts.md, "ClickHouse cluster"); every node is a fallback.
      const firsts = clickhouse.nodes.filter((node) => node.replica === 1).map((node) => node.url);
      const others = clickhouse.nodes.filter((node) => node.replica !== 1).map((node) => node.url);
      const turn = i % firsts.length;
      const urls = [...firsts.slice(turn), ...firsts.slice(0, turn), ...others];
      storage.push(await make('storage', i, { CLICKHOUSE_URL: urls.join(',') }));
    }
    // Storage first: it makes the schema, the streams and the buckets the others use.
    for (const service of storage) await service.start();
    const hosts = await Promise.all(Array.from({ length: EACH }, (_, i) => make('host', i)));
    await Promise.all(hosts.map((host) => host.start()));
    const gateways: GatewayInCluster[] = [];
    for (let i = 0; i < EACH; i++) {
      const port = options.gatewayPort === undefined ? await freePort() : options.gatewayPort + i;
      const baseUrl = `http://127.0.0.1:${port}`;
      gateways.push({ ...(await make('gateway', i, { GATEWAY_PORT: String(port) })), baseUrl });
    }
    await Promise.all(gateways.map((gateway) => gateway.start()));
    return { nats, clickhouse, storage, hosts, gateways, env, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

// Three NATS servers on loopback forming one JetStream cluster, each with its store under its
// own folder. A node can be killed and started again on the same store, to rejoin.
import { join } from 'node:path';
import { jetstreamManager, StorageType } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { freePort, portOpen } from './ports.ts';
import { launchNats, type NatsOptions } from './nats.ts';
import { clusterNode, type ClusterNode } from './cluster-node.ts';
import { waitUntil } from './process.ts';

export interface NatsNode extends ClusterNode {
  url: string;
}

export interface NatsCluster {
  nodes: NatsNode[];
  /** Every node's URL, comma-separated: what NATS_URL takes. */
  url: string;
  stop(): Promise<void>;
}

/** A stream made and deleted to learn that the cluster places streams on all its servers. */
const PLACEMENT_PROBE = 'CLUSTER_READY';

export async function startNatsCluster(options: { dir: string; size?: number; maxFileStore?: string }): Promise<NatsCluster> {
  const size = options.size ?? 3;
  const ports = await Promise.all(Array.from({ length: size }, () => freePort()));
  const routePorts = await Promise.all(Array.from({ length: size }, () => freePort()));
  const nodes = ports.map((port, i) =>
    natsNode({
      dir: join(options.dir, `nats-${i + 1}`),
      port,
      maxFileStore: options.maxFileStore,
      cluster: { serverName: `nats-${i + 1}`, routePort: routePorts[i]!, routePorts },
    }),
  );
  const cluster: NatsCluster = {
    nodes,
    url: nodes.map((node) => node.url).join(','),
    stop: async () => void (await Promise.all(nodes.map((node) => node.stop()))),
  };
  try {
    await Promise.all(nodes.map((node) => node.start()));
    await waitUntil('the NATS cluster to place a stream on all its servers', () => placesOnAll(cluster.url, size), 30_000);
  } catch (error) {
    await cluster.stop();
    throw error;
  }
  return cluster;
}

function natsNode(options: NatsOptions & { cluster: NonNullable<NatsOptions['cluster']> }): NatsNode {
  const launch = async () => {
    const service = launchNats(options);
    const died = service.exited.then((code) => {
      throw new Error(`${service.name} exited (${code}): ${service.output()}`);
    });
    // Only the race listens: a later exit (a kill) is not an error.
    died.catch(() => {});
    await Promise.race([waitUntil(service.name, () => portOpen(options.port), 15_000), died]);
    return service;
  };
  return { ...clusterNode(options.cluster.serverName, launch), url: `nats://127.0.0.1:${options.port}` };
}

/**
 * Whether JetStream places a stream on every server: a leader is elected before all the servers
 * have joined it, and a stream of three replicas made then fails ("no suitable peers for
 * placement"; seen on a loaded two-core machine).
 */
async function placesOnAll(servers: string, replicas: number): Promise<boolean> {
  const nc = await connect({ servers: servers.split(','), timeout: 2000 });
  try {
    const jsm = await jetstreamManager(nc, { timeout: 2000 });
    await jsm.streams.add({ name: PLACEMENT_PROBE, subjects: [`${PLACEMENT_PROBE}.probe`], num_replicas: replicas, storage: StorageType.Memory });
    await jsm.streams.delete(PLACEMENT_PROBE);
    return true;
  } finally {
    await nc.close();
  }
}

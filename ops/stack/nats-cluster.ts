// Three NATS servers on loopback forming one JetStream cluster, each with its store under its
// own folder. A node can be killed and started again on the same store, to rejoin.
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { freePort, portOpen } from './ports.ts';
import { launchNats, type NatsOptions } from './nats.ts';
import { waitUntil, type Service } from './process.ts';

export interface NatsNode {
  name: string;
  url: string;
  /** SIGKILL, as a machine lost: nothing flushed, nothing said to the others. */
  kill(): Promise<void>;
  /** Starts it again on the same store; resolves once it accepts clients. */
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Resolves when the running process exits. */
  exited(): Promise<unknown>;
}

export interface NatsCluster {
  nodes: NatsNode[];
  /** Every node's URL, comma-separated: what NATS_URL takes. */
  url: string;
  stop(): Promise<void>;
}

export async function startNatsCluster(options: { dir: string; size?: number; maxFileStore?: string }): Promise<NatsCluster> {
  const size = options.size ?? 3;
  const ports = await Promise.all(Array.from({ length: size }, () => freePort()));
  const routePorts = await Promise.all(Array.from({ length: size }, () => freePort()));
  const nodes = ports.map((port, i) =>
    clusterNode({
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
    await waitUntil('the NATS cluster to elect a JetStream leader', () => jetStreamAnswers(cluster.url), 30_000);
  } catch (error) {
    await cluster.stop();
    throw error;
  }
  return cluster;
}

function clusterNode(options: NatsOptions & { cluster: NonNullable<NatsOptions['cluster']> }): NatsNode {
  let service: Service | undefined;
  const stop = async () => {
    await service?.stop();
    service = undefined;
  };
  return {
    name: options.cluster.serverName,
    url: `nats://127.0.0.1:${options.port}`,
    stop,
    exited: () => service?.exited ?? Promise.resolve(),
    async kill() {
      if (!service) return;
      process.kill(service.pid, 'SIGKILL');
      await stop();
    },
    async start() {
      service = launchNats(options);
      const started = service;
      const died = started.exited.then((code) => {
        throw new Error(`${started.name} exited with code ${code}: ${started.output()}`);
      });
      // Only the race listens: a later exit (a kill) is not an error.
      died.catch(() => {});
      await Promise.race([waitUntil(started.name, () => portOpen(options.port), 15_000), died]);
    },
  };
}

async function jetStreamAnswers(servers: string): Promise<boolean> {
  const nc = await connect({ servers: servers.split(','), timeout: 2000 });
  try {
    await (await jetstreamManager(nc, { timeout: 2000 })).getAccountInfo();
    return true;
  } finally {
    await nc.close();
  }
}

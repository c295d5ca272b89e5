// A ZooKeeper ensemble of three on loopback, laid out as production's
// (ops/production/clickhouse/zoo.cfg): it serves while two members answer each other. Each member
// is a cluster node (cluster-node.ts): killed, it stays down; started again on its data, it
// rejoins and catches up from the leader.
import { join } from 'node:path';
import { clusterNode, type ClusterNode } from './cluster-node.ts';
import { freePort } from './ports.ts';
import { startZooKeeper } from './zookeeper.ts';

export interface ZooKeeperMember extends ClusterNode {
  host: string;
  /** Its client port, which ClickHouse's `<zookeeper>` lists. */
  port: number;
}

export interface ZooKeeperEnsemble {
  members: ZooKeeperMember[];
  stop(): Promise<void>;
}

const SIZE = 3;

/** Starts the three members at once: none serves before a quorum of them has elected a leader. */
export async function startZooKeeperEnsemble(options: { dir: string }): Promise<ZooKeeperEnsemble> {
  const ports = await Promise.all(
    Array.from({ length: SIZE }, async () => ({ client: await freePort(), quorum: await freePort(), election: await freePort() })),
  );
  const members = ports.map((port, i): ZooKeeperMember => {
    const name = `zookeeper-${i + 1}`;
    const launch = () => startZooKeeper({ dir: join(options.dir, name), port: port.client, ensemble: { myid: i + 1, servers: ports } });
    return { ...clusterNode(name, launch), host: '127.0.0.1', port: port.client };
  });
  const stop = async () => {
    await Promise.all(members.map((member) => member.stop()));
  };
  try {
    await Promise.all(members.map((member) => member.start()));
  } catch (error) {
    await stop();
    throw error;
  }
  return { members, stop };
}

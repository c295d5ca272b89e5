// One ZooKeeper server (Debian's `zookeeper` package) on loopback, started without systemd:
// java on the package's jar, whose manifest names every library it needs, with a generated
// zoo.cfg: standalone, or a member of an ensemble (zookeeper-ensemble.ts). Data and logs under
// the given folder.
import { mkdirSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { startService, waitUntil, type Service } from './process.ts';

const JARS = ['/usr/share/java/zookeeper.jar', '/usr/share/java/slf4j-simple.jar'];
const MAIN = 'org.apache.zookeeper.server.quorum.QuorumPeerMain';

export interface ZooKeeperOptions {
  dir: string;
  /** Its client port; a given `config` must name the same. */
  port: number;
  /** A zoo.cfg of one's own (a member of an ensemble, with its myid in its dataDir); absent, a generated one. */
  config?: string;
  /** Makes the generated zoo.cfg a member's: its number (1-based) among the ensemble's servers. */
  ensemble?: { myid: number; servers: EnsemblePorts[] };
}

/** Where a member of a loopback ensemble listens for its followers and for leader election. */
export interface EnsemblePorts {
  quorum: number;
  election: number;
}

export interface ZooKeeper extends Service {
  host: string;
  port: number;
}

export async function startZooKeeper(options: ZooKeeperOptions): Promise<ZooKeeper> {
  const data = join(options.dir, 'data');
  mkdirSync(data, { recursive: true });
  const configFile = join(options.dir, 'zoo.cfg');
  if (options.ensemble) writeFileSync(join(data, 'myid'), `${options.ensemble.myid}\n`);
  writeFileSync(configFile, options.config ?? zooConfig(options.port, data, options.ensemble?.servers));
  // Three JVMs per cluster on a small machine: a few thousand znodes fit in a small heap, and the
  // serial collector keeps each JVM's threads and memory to what one core needs. Only the client
  // compiler: the optimizing one spent more CPU compiling what a local cluster's replicas keep
  // asking than its code saved (the three JVMs of cluster/zookeeper-loss took 38 s of CPU with it
  // and 21 s without; a start 0.94 s and 0.70 s).
  const service = startService('zookeeper', 'java', ['-Xmx128m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', '-cp', JARS.join(':'), MAIN, configFile], {
    logFile: join(options.dir, 'zookeeper.log'),
    cwd: options.dir,
  });
  await Promise.race([
    waitUntil('zookeeper', () => serving(options.port), 60_000),
    service.exited.then((code) => {
      throw new Error(`zookeeper exited (${code}):\n${service.output()}`);
    }),
  ]);
  return { ...service, host: '127.0.0.1', port: options.port };
}

function zooConfig(port: number, data: string, servers: EnsemblePorts[] = []): string {
  return [
    'tickTime=2000',
    // As production's zoo.cfg: how many ticks a follower may take to join the leader and to answer it.
    ...(servers.length ? ['initLimit=10', 'syncLimit=5'] : []),
    ...servers.map((ports, i) => `server.${i + 1}=127.0.0.1:${ports.quorum}:${ports.election}`),
    `dataDir=${data}`,
    `clientPort=${port}`,
    'clientPortAddress=127.0.0.1',
    // The admin web server would take port 8080, the gateway's.
    'admin.enableServer=false',
    // Four-letter words are off by default since 3.5; srvr tells readiness.
    '4lw.commands.whitelist=ruok,srvr,mntr',
    'autopurge.purgeInterval=1',
    // A cluster on one machine (the tests', `npm run cluster`): its log must outlive a killed
    // process, not a power cut, and an fsync per write stalls every node's replication and DDL
    // while the disk is busy. The production zoo.cfg keeps the fsync.
    'forceSync=no',
    '',
  ].join('\n');
}

/**
 * Whether it takes sessions. `ruok` answers as soon as the port is bound, before the server
 * runs (a client then is dropped, and ClickHouse 18.16 can crash on that); `srvr` says
 * "not currently serving requests" until it does.
 */
export const serving = async (port: number) => (await ask(port, 'srvr')).startsWith('Zookeeper version');

/** The reply to a four-letter word (`srvr` tells the mode: standalone, leader, follower); empty if none. */
export function ask(port: number, word: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    let reply = '';
    socket.setTimeout(2000, () => socket.destroy());
    socket.once('connect', () => socket.write(word));
    socket.on('data', (chunk) => (reply += chunk.toString()));
    socket.once('close', () => resolve(reply));
    socket.once('error', () => resolve(''));
  });
}

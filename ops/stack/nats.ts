// A local NATS server with JetStream, its store under the given folder, listening on loopback;
// alone, or as one node of a cluster (ops/stack/nats-cluster.ts).
//
// Its users are production's (bus/permissions.ts): each kind of process connects as its own,
// with the passwords of bus-credentials.ts (service-process.ts puts them in its NATS_URL). A
// connection without credentials is the operator `admin`, with every right: the tests, the
// benchmarks and ops' tools connect so, on loopback only.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BUS_USERS, permissions, tenantPermissions } from '../../bus/permissions.ts';
import { localPasswords } from './bus-credentials.ts';
import { natsUserEntry, type NatsUser } from './nats-users.ts';
import { portOpen } from './ports.ts';
import { startService, waitUntil, type Service } from './process.ts';

export interface NatsOptions {
  dir: string;
  port: number;
  maxMemoryStore?: string;
  maxFileStore?: string;
  /** Where the server's monitoring answers (/connz...), if anywhere. */
  monitorPort?: number;
  /** Users for tenants' live results, beside the processes' (bus/permissions.ts tenantPermissions). */
  tenants?: TenantUser[];
  /** Joins a cluster: its name must be unique there. */
  cluster?: NatsClusterMembership;
}

export interface TenantUser {
  user: string;
  password: string;
  /** A product's subject token, or `<product>.<user>` (bus/subjects.ts tenantOf). */
  tenant: string;
}

export interface NatsClusterMembership {
  serverName: string;
  /** Where this node listens for the other nodes' routes. */
  routePort: number;
  /** Every node's route port, this one's included (a node skips the route to itself). */
  routePorts: number[];
}

export async function startNats(options: NatsOptions): Promise<Service & { url: string }> {
  const service = launchNats(options);
  await waitUntil('nats-server', () => portOpen(options.port), 15_000);
  return { ...service, url: `nats://127.0.0.1:${options.port}` };
}

/** Starts the server without waiting for it: the nodes of a cluster come up together. */
export function launchNats(options: NatsOptions): Service {
  mkdirSync(join(options.dir, 'jetstream'), { recursive: true });
  const configFile = join(options.dir, 'nats.conf');
  const { cluster } = options;
  const passwords = localPasswords();
  const users: NatsUser[] = [
    ...BUS_USERS.map((user) => ({ user, password: JSON.stringify(passwords[user]), permissions: permissions(user) })),
    { user: 'admin', password: JSON.stringify(passwords.admin) },
    ...(options.tenants ?? []).map(({ user, password, tenant }) => ({ user, password: JSON.stringify(password), permissions: tenantPermissions(tenant) })),
  ];
  writeFileSync(
    configFile,
    [
      `listen: 127.0.0.1:${options.port}`,
      `server_name: ${cluster?.serverName ?? 'local'}`,
      `max_payload: 8MB`,
      ...(options.monitorPort ? [`http: 127.0.0.1:${options.monitorPort}`] : []),
      'authorization {',
      '  users: [',
      ...users.map((user) => natsUserEntry(user, '    ')),
      '  ]',
      '}',
      'no_auth_user: admin',
      'jetstream {',
      `  store_dir: "${join(options.dir, 'jetstream')}"`,
      `  max_memory_store: ${options.maxMemoryStore ?? '256MB'}`,
      `  max_file_store: ${options.maxFileStore ?? '4GB'}`,
      '}',
      ...(cluster
        ? [
            'cluster {',
            '  name: emo',
            `  listen: 127.0.0.1:${cluster.routePort}`,
            `  routes: [${cluster.routePorts.map((port) => `nats-route://127.0.0.1:${port}`).join(', ')}]`,
            '}',
          ]
        : []),
      '',
    ].join('\n'),
  );
  return startService(cluster?.serverName ?? 'nats', 'nats-server', ['-c', configFile], { logFile: join(options.dir, 'nats.log') });
}

// One NATS connection per process, reconnecting for ever: a restarted NATS server or a
// network blip must not take a process down.
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { Logger } from './log.ts';
import { inboxPrefix, type BusUser } from './permissions.ts';

export interface BusOptions {
  /**
   * Whether each request keeps the stack of its caller for the error it may end in (nats.js
   * builds an Error per request for it). A process that turns every bus error into an answer
   * of its own, where the stack is never shown, saves that cost with `false`.
   */
  asyncTraces?: boolean;
  /** The kind of process connecting: its replies arrive under its own inbox prefix (bus/permissions.ts). */
  user?: BusUser;
}

/**
 * `servers`: NATS URLs, comma-separated. A user and password in one of them
 * (nats://user:password@host:4222) are the connection's credential: nats.js reads none from a
 * URL. Disconnections and reconnections are logged to `log`.
 */
export async function connectBus(name: string, servers: string, log: Logger, options: BusOptions = {}): Promise<NatsConnection> {
  const bus = busServers(servers);
  const nc = await connect({
    servers: bus.servers,
    ...(bus.user === undefined ? {} : { user: bus.user, pass: bus.pass }),
    ...(options.user ? { inboxPrefix: inboxPrefix(options.user) } : {}),
    name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    waitOnFirstConnect: true,
    noAsyncTraces: options.asyncTraces === false,
  });
  (async () => {
    for await (const status of nc.status()) {
      if (status.type === 'disconnect' || status.type === 'reconnect' || status.type === 'error') {
        // An error names what the server refused, such as a permission this kind lacks (bus/permissions.ts).
        log.warn({ bus: status.type, server: 'server' in status ? status.server : undefined, err: status.type === 'error' ? status.error : undefined }, 'bus connection');
      }
    }
  })().catch(() => {});
  return nc;
}

/** The servers of a NATS_URL without their credentials, and the credential the first of them that has one carries. */
export function busServers(servers: string): { servers: string[]; user?: string; pass?: string } {
  let user: string | undefined;
  let pass: string | undefined;
  const bare = servers.split(',').map((server) => {
    const url = URL.canParse(server) ? new URL(server) : undefined;
    if (!url?.username) return server;
    if (user === undefined) {
      user = decodeURIComponent(url.username);
      pass = decodeURIComponent(url.password);
    }
    url.username = '';
    url.password = '';
    return url.toString().replace(/\/$/, '');
  });
  return { servers: bare, user, pass };
}

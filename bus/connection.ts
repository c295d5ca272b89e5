// One NATS connection per process, reconnecting for ever: a restarted NATS server or a
// network blip must not take a process down.
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { Logger } from './log.ts';

/** `servers`: NATS URLs, comma-separated. Disconnections and reconnections are logged to `log`. */
export async function connectBus(name: string, servers: string, log: Logger): Promise<NatsConnection> {
  const nc = await connect({
    servers: servers.split(','),
    name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    waitOnFirstConnect: true,
  });
  (async () => {
    for await (const status of nc.status()) {
      if (status.type === 'disconnect' || status.type === 'reconnect' || status.type === 'error') {
        log.warn({ bus: status.type, server: 'server' in status ? status.server : undefined }, 'bus connection');
      }
    }
  })().catch(() => {});
  return nc;
}

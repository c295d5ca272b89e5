// One NATS connection per process, reconnecting for ever: a restarted NATS server or a
// network blip must not take a process down.
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { Logger } from './log.ts';

export interface BusOptions {
  /**
   * Whether each request keeps the stack of its caller for the error it may end in (nats.js
   * builds an Error per request for it). A process that turns every bus error into an answer
   * of its own, where the stack is never shown, saves that cost with `false`.
   */
  asyncTraces?: boolean;
}

/** `servers`: NATS URLs, comma-separated. Disconnections and reconnections are logged to `log`. */
export async function connectBus(name: string, servers: string, log: Logger, options: BusOptions = {}): Promise<NatsConnection> {
  const nc = await connect({
    servers: servers.split(','),
    name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    waitOnFirstConnect: true,
    noAsyncTraces: options.asyncTraces === false,
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

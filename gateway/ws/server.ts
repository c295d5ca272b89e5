// The WebSocket API at /ws/v1, on the gateway's HTTP server. Every socket has its errors
// handled from the moment the upgrade request arrives: a client that resets the connection at
// any stage costs nothing but the socket.
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { NatsConnection } from '@nats-io/transport-node';
import { Gauge, type Registry } from 'prom-client';
import { WebSocketServer } from 'ws';
import type { Logger } from '../../bus/log.ts';
import type { Authenticator } from '../auth/authenticator.ts';
import type { ClientAddresses } from '../client-address.ts';
import { budgetHeaders, RateLimit } from '../rate-limit.ts';
import type { Send } from '../routes/bus-call.ts';
import { CLOSE, Connection } from './connection.ts';
import { Feeds } from './feeds.ts';
import { Counts } from '../counts.ts';
import { WS_PROTOCOL, type WsLimits } from './limits.ts';
import { NotSignedIn } from './not-signed-in.ts';
import { PushBudgets } from './push-budgets.ts';
import { pushMetrics } from './push-metrics.ts';

const WS_PATH = '/ws/v1';

export interface WebSocketDeps {
  nc: NatsConnection;
  authenticator: Authenticator;
  send: Send;
  log: Logger;
  limits: WsLimits;
  /** Failed authentications per client address, shared with the REST API. */
  authFailures: RateLimit;
  /** The users' request budget, shared with the REST API: each subscribe spends one. */
  requests: RateLimit;
  addresses: ClientAddresses;
  /** Where open connections are counted (the gateway's /metrics). */
  registry?: Registry;
}

export function attachWebSocket(server: Server, deps: WebSocketDeps): { close(): Promise<void> } {
  const { limits, log } = deps;
  const feeds = new Feeds(deps.nc, log);
  const users = new Counts(limits.connectionsPerUser);
  const subscriptions = new Counts(limits.subscriptionsPerUser);
  const pushBudgets = new PushBudgets(limits.pushBytesPerSecondPerUser);
  const pushed = pushMetrics(deps.registry);
  const anonymous = new NotSignedIn(limits.unauthenticatedPerAddress);
  const upgrades = new RateLimit(limits.upgradesPerAddressPerMinute, 60);
  const connections = new Set<Connection>();
  const wss = new WebSocketServer({ noServer: true, maxPayload: WS_PROTOCOL.maxMessageBytes });
  if (deps.registry) {
    new Gauge({
      name: 'emo_websocket_connections',
      help: 'Open WebSocket connections, authenticated or not',
      registers: [deps.registry],
      collect() {
        this.set(connections.size);
      },
    });
  }

  const refuse = (socket: Duplex, status: string, headers: Record<string, string> = {}) => {
    const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
    socket.end(`HTTP/1.1 ${status}\r\n${lines}Connection: close\r\nContent-Length: 0\r\n\r\n`);
  };

  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', (error) => log.debug({ err: error }, 'websocket upgrade socket error'));
    const path = (request.url ?? '').split('?')[0];
    if (path !== WS_PATH) return refuse(socket, '404 Not Found');
    const address = deps.addresses.of(request);
    // Each upgrade costs a handshake and a socket before anyone is known: bounded per address.
    // A socket that signs in gives its upgrade back, so that the clients behind one address
    // (a NAT, an office) are limited only by the sockets that never sign in.
    upgrades.take(address).then(
      (budget) => (budget.allowed ? accept(request, socket, head, address) : refuse(socket, '429 Too Many Requests', budgetHeaders(budget))),
      (error: unknown) => {
        log.error({ err: error }, 'websocket upgrade budget failed');
        refuse(socket, '503 Service Unavailable');
      },
    );
  };

  const accept = (request: IncomingMessage, socket: Duplex, head: Buffer, address: string) => {
    // Gone while its budget was looked up: nothing to hold a place for.
    if (socket.destroyed) return;
    let evict = (): void => void socket.destroy();
    const releaseAnonymous = anonymous.admit(address, () => evict());
    // A handshake that never completes (the client went) must give its place back too.
    socket.once('close', releaseAnonymous);
    wss.handleUpgrade(request, socket, head, (ws) => {
      const connection = new Connection(ws, {
        authenticator: deps.authenticator,
        send: deps.send,
        feeds,
        users,
        subscriptions,
        pushBudgets,
        pushMetrics: pushed,
        limits,
        log,
        address,
        authFailures: deps.authFailures,
        requests: deps.requests,
        releaseAnonymous,
        signedIn: () => void upgrades.refund(address).catch(() => {}),
      });
      evict = () => connection.close(CLOSE.tooManyRequests, 'too many sockets not signed in from this address');
      connections.add(connection);
      ws.once('close', () => connections.delete(connection));
    });
  };
  server.on('upgrade', onUpgrade);

  return {
    async close() {
      server.off('upgrade', onUpgrade);
      for (const connection of connections) connection.close(CLOSE.goingAway, 'server shutting down');
      feeds.close();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}

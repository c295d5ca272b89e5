// The WebSocket API at /ws/v1, on the gateway's HTTP server.
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { NatsConnection } from '@nats-io/transport-node';
import { WebSocketServer } from 'ws';
import type { Logger } from '../../bus/log.ts';
import type { Authenticator } from '../auth/authenticator.ts';
import type { Send } from '../routes/bus-call.ts';
import { CLOSE, Connection } from './connection.ts';
import { Feeds } from './feeds.ts';
import { DEFAULT_WS_LIMITS, UserConnections, type WsLimits } from './limits.ts';

export const WS_PATH = '/ws/v1';

export interface WebSocketDeps {
  nc: NatsConnection;
  authenticator: Authenticator;
  send: Send;
  log: Logger;
  limits?: Partial<WsLimits>;
}

export function attachWebSocket(server: Server, deps: WebSocketDeps): { close(): Promise<void> } {
  const limits = { ...DEFAULT_WS_LIMITS, ...deps.limits };
  const feeds = new Feeds(deps.nc, deps.log);
  const users = new UserConnections(limits.connectionsPerUser);
  const connections = new Set<Connection>();
  const wss = new WebSocketServer({ noServer: true, maxPayload: limits.maxMessageBytes });

  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = (request.url ?? '').split('?')[0];
    if (path !== WS_PATH) {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    wss.handleUpgrade(request, socket, head, (ws) => {
      const connection = new Connection(ws, { authenticator: deps.authenticator, send: deps.send, feeds, users, limits, log: deps.log });
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

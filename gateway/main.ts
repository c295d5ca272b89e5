// Entry point of a gateway process.
import { createServer } from 'node:http';
import { config } from '../bus/config.ts';
import { connectBus } from '../bus/connection.ts';
import { log } from '../bus/log.ts';
import { createApp } from './app.ts';
import { Authenticator } from './auth/authenticator.ts';
import { busSender } from './routes/bus-call.ts';
import { attachWebSocket } from './ws/server.ts';

const authenticator = new Authenticator({ tokensFile: config.authTokensFile, jwtSecret: config.authJwtSecret });
const nc = await connectBus(`gateway ${config.hostId}`);
const app = createApp({ send: busSender(nc), authenticator, log: log.child({ component: 'gateway' }), bodyLimitBytes: config.bodyLimitBytes });
const server = createServer(app.callback());
server.keepAliveTimeout = 65_000;
const webSocket = attachWebSocket(server, {
  nc,
  authenticator,
  send: busSender(nc),
  log: log.child({ component: 'ws' }),
  limits: {
    connectionsPerUser: config.wsConnectionsPerUser,
    unauthenticatedPerAddress: config.wsUnauthenticatedPerAddress,
    idleMs: config.wsIdleSeconds * 1000,
    subscriptionsPerConnection: config.wsSubscriptionsPerConnection,
    messagesPerMinute: config.wsMessagesPerMinute,
  },
});
server.listen(config.port, config.host, () => log.info({ url: `http://${config.host}:${config.port}` }, 'gateway listening'));

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void webSocket.close();
    server.close();
    server.closeAllConnections();
    void nc.drain().finally(() => process.exit(0));
  });
}

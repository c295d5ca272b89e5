// Entry point of a gateway process.
import { readGatewayConfig } from '../bus/config.ts';
import { connectBus } from '../bus/connection.ts';
import { createLog } from '../bus/log.ts';
import { createRegistry, MetricsServer } from '../bus/metrics-server.ts';
import { logUnhandled, stopOnSignal } from '../bus/process-lifecycle.ts';
import { busRequestMetrics } from '../bus/request-metrics.ts';
import { createApp } from './app.ts';
import { Authenticator } from './auth/authenticator.ts';
import { ClientAddresses } from './client-address.ts';
import { createHttpServer } from './http-server.ts';
import { openApiDocument } from './openapi/document.ts';
import { RateLimit } from './rate-limit.ts';
import { busSender } from './routes/bus-call.ts';
import { userBudgets } from './user-budgets.ts';
import { attachWebSocket } from './ws/server.ts';

const config = readGatewayConfig();
const log = createLog(config);
logUnhandled(log, 'gateway');
const registry = createRegistry();
const metrics = await MetricsServer.start(registry, config, log);
const authenticator = new Authenticator({
  tokensFile: config.authTokensFile,
  jwtSecret: config.authJwtSecret,
  jwtAudience: config.jwtAudience,
  jwtIssuer: config.jwtIssuer,
});
const addresses = new ClientAddresses(config.trustedProxies);
// Every bus error becomes an API error (bus/rpc.ts) whose stack nobody sees: no async traces.
const nc = await connectBus(`gateway ${config.hostId}`, config.natsUrl, log, { asyncTraces: false, user: 'gateway' });
const send = busSender(nc, config.requestTimeoutMs, busRequestMetrics(registry));
const authFailures = new RateLimit(config.authFailuresPerMinute, 60);
// One budget per user for REST requests and WebSocket subscribes alike.
const requests = new RateLimit(config.rateLimitRequests, config.rateLimitWindowSeconds);
const app = createApp({
  send,
  authenticator,
  addresses,
  budgets: userBudgets(config),
  limits: { perUser: requests, authFailuresPerAddress: authFailures },
  log: log.child({ component: 'gateway' }),
  bodyLimitBytes: config.bodyLimitBytes,
  refusalHoldMs: config.rateLimitRefusalHoldMs,
  openApi: openApiDocument(),
  registry,
});
const server = createHttpServer(app, log.child({ component: 'http' }));
const webSocket = attachWebSocket(server, {
  nc,
  authenticator,
  send,
  log: log.child({ component: 'ws' }),
  authFailures,
  requests,
  addresses,
  registry,
  limits: {
    connectionsPerUser: config.wsConnectionsPerUser,
    unauthenticatedPerAddress: config.wsUnauthenticatedPerAddress,
    authTimeoutMs: config.wsAuthTimeoutSeconds * 1000,
    idleMs: config.wsIdleSeconds * 1000,
    subscriptionsPerConnection: config.wsSubscriptionsPerConnection,
    subscriptionsPerUser: config.wsSubscriptionsPerUser,
    pushBytesPerSecondPerUser: config.wsPushBytesPerSecondPerUser,
    messagesPerMinute: config.wsMessagesPerMinute,
    upgradesPerAddressPerMinute: config.wsUpgradesPerAddressPerMinute,
  },
});
server.listen(config.gatewayPort, config.gatewayHost, () => {
  log.info({ url: `http://${config.gatewayHost}:${config.gatewayPort}` }, 'gateway listening');
  metrics.markReady();
});

stopOnSignal(log, 'gateway', async () => {
  metrics.markStopping();
  const closing = webSocket.close();
  server.close();
  server.closeAllConnections();
  await closing;
  await nc.drain();
});

// Runs the whole service locally: NATS and ClickHouse with their data under var/, the storage
// service, one actor host and the gateway. Prints the base URL and a working bearer token;
// Ctrl-C stops it all. The three service processes are supervised: one that dies is started
// again.
import { join } from 'node:path';
import { hostname } from 'node:os';
import { readConfig } from '../bus/config.ts';
import { connectBus } from '../bus/connection.ts';
import { waitForHealth } from '../bus/health.ts';
import { createLog } from '../bus/log.ts';
import { startClickHouse } from './stack/clickhouse.ts';
import { developmentToken } from './stack/dev-token.ts';
import { startNats } from './stack/nats.ts';
import { startService, waitUntil } from './stack/process.ts';
import { supervise } from './stack/supervise.ts';

const config = readConfig();
const log = createLog(config);

const natsPort = Number(new URL(config.natsUrl).port || 4222);
const clickhouseUrl = new URL(config.clickhouseUrl);
const dataDir = join(config.varDir, 'local');
const started: { stop(): Promise<void> }[] = [];
let stopping = false;

async function stopAll(): Promise<void> {
  stopping = true;
  for (const service of started.reverse()) await service.stop();
}

try {
  const nats = await startNats({ dir: join(dataDir, 'nats'), port: natsPort });
  started.push(nats);
  const clickhouse = await startClickHouse({
    dir: join(dataDir, 'clickhouse'),
    httpPort: Number(clickhouseUrl.port || 8123),
    tcpPort: config.clickhouseTcpPort,
  });
  started.push(clickhouse);
  const tokensFile = config.authTokensFile ?? join(dataDir, 'tokens.json');
  const token = developmentToken(tokensFile);
  process.env.AUTH_TOKENS_FILE = tokensFile;
  const env = process.env;
  const tsx = ['--import', 'tsx'];
  // Fixed metrics ports, so a local Prometheus (or curl) knows where to look.
  const metricsPorts = { gateway: 9464, host: 9465, storage: 9466 };
  const bus = await connectBus('npm start', config.natsUrl, log);
  // The storage service first: it creates the schema and the ROWS stream the host writes to.
  const storageLog = join(dataDir, 'storage.log');
  const storageId = `${hostname()}-storage`;
  const startStorage = () =>
    startService('storage', process.execPath, [...tsx, 'storage/main.ts'], { logFile: storageLog, env: { ...env, HOST_ID: storageId, METRICS_PORT: String(metricsPorts.storage) }, cwd: config.projectRoot });
  const storage = startStorage();
  await waitForHealth(bus, storageId, 120_000, storage.exited).catch((error: Error) => {
    throw new Error(`${error.message}; see ${storageLog}`);
  });
  started.push(supervise(storage, startStorage, (message) => console.error(message)));
  const hostLog = join(dataDir, 'actor-host.log');
  // A fixed id: its health subject is known, and the session records name a stable owner.
  const hostId = `${hostname()}-actor-host`;
  const startHost = () =>
    startService('actor-host', process.execPath, [...tsx, 'actors/main.ts'], { logFile: hostLog, env: { ...env, HOST_ID: hostId, METRICS_PORT: String(metricsPorts.host) }, cwd: config.projectRoot });
  const host = startHost();
  await waitForHealth(bus, hostId, 120_000, host.exited).catch((error: Error) => {
    throw new Error(`${error.message}; see ${hostLog}`);
  });
  await bus.close();
  started.push(supervise(host, startHost, (message) => console.error(message)));
  const gatewayLog = join(dataDir, 'gateway.log');
  const startGateway = () => startService('gateway', process.execPath, [...tsx, 'gateway/main.ts'], { logFile: gatewayLog, env: { ...env, METRICS_PORT: String(metricsPorts.gateway) }, cwd: config.projectRoot });
  started.push(supervise(startGateway(), startGateway, (message) => console.error(message)));
  const baseUrl = `http://${config.host}:${config.port}`;
  await waitUntil('gateway', async () => (await fetch(`${baseUrl}/v1/sessions`)).status === 401, 60_000);
  console.log(`
The service is running.
  dashboard:  ${baseUrl}/ (sign in with the token below)
  base URL:   ${baseUrl}/v1
  WebSocket:  ws://${config.host}:${config.port}/ws/v1
  token:      ${token}
  NATS:       ${config.natsUrl}
  ClickHouse: ${config.clickhouseUrl} (database ${config.clickhouseDatabase})
  metrics:    http://${config.metricsHost}:{${metricsPorts.gateway},${metricsPorts.host},${metricsPorts.storage}}/metrics (gateway, actor host, storage; also /livez, /readyz)
  logs:       ${dataDir}/*.log

Try: curl -H 'Authorization: Bearer ${token}' ${baseUrl}/v1/sessions
Ctrl-C stops everything.`);
  // NATS and ClickHouse hold the state: without them nothing can be restarted usefully.
  for (const service of [nats, clickhouse]) {
    void service.exited.then((code) => {
      if (stopping) return;
      console.error(`${service.name} exited (${code}); stopping everything. See ${dataDir}.`);
      void stopAll().finally(() => process.exit(1));
    });
  }
} catch (error) {
  console.error((error as Error).message);
  await stopAll();
  process.exit(1);
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.log('stopping...');
    void stopAll().finally(() => process.exit(0));
  });
}

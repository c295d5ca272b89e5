// Runs the whole service locally: NATS and ClickHouse with their data under var/, the storage
// service, one actor host and the gateway. Prints the base URL and a working bearer token;
// Ctrl-C stops it all. The three service processes are kept running: one that crashes is
// started again (ops/stack/service-process.ts). Unless `--no-demo`, it also starts the demo
// (ops/demo/demo.ts): a looping stream of faces and speech on a loopback RTMP server, analysed
// in a session of the printed token's user, so the dashboard shows results within a minute.
import { join } from 'node:path';
import { hostname } from 'node:os';
import { readConfig } from '../bus/config.ts';
import { readOpsConfig } from './ops-config.ts';
import { startDemo } from './demo/demo.ts';
import { startClickHouse } from './stack/clickhouse.ts';
import { developmentToken } from './stack/dev-token.ts';
import { startNats } from './stack/nats.ts';
import { serviceProcess, type Role } from './stack/service-process.ts';

const args = process.argv.slice(2);
const unknown = args.filter((arg) => arg !== '--no-demo');
if (unknown.length > 0) {
  console.error(`unknown argument ${unknown.join(' ')}; usage: npm start [-- --no-demo]`);
  process.exit(2);
}
const withDemo = !args.includes('--no-demo');

const config = { ...readConfig(), ...readOpsConfig() };

const natsPort = Number(new URL(config.natsUrl).port || 4222);
const clickhouseUrl = new URL(config.clickhouseUrl);
const dataDir = join(config.varDir, 'local');
const started: { stop(): Promise<void> }[] = [];
let stopping = false;

async function stopAll(): Promise<void> {
  stopping = true;
  for (const service of started.reverse()) await service.stop();
}

// From the first start on: a Ctrl-C while the rest starts stops what is up.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.log('stopping...');
    void stopAll().finally(() => process.exit(0));
  });
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
  // Fixed metrics ports, so a local Prometheus (or curl) knows where to look; fixed ids, so
  // the session records name a stable owner.
  const metricsPorts = { gateway: 9464, host: 9465, storage: 9466 };
  const spec = (role: Role, name: string) =>
    serviceProcess({ id: `${hostname()}-${name}`, role, projectRoot: config.projectRoot, logFile: join(dataDir, `${name}.log`), env: { ...process.env, NATS_URL: config.natsUrl }, metricsHost: config.metricsHost, metricsPort: metricsPorts[role] });
  // The storage service first: it creates the schema and the ROWS stream the host writes to.
  for (const member of [spec('storage', 'storage'), spec('host', 'actor-host'), spec('gateway', 'gateway')]) {
    await member.start();
    member.keepRunning((message) => console.error(message));
    started.push(member);
  }
  const baseUrl = `http://${config.gatewayHost}:${config.gatewayPort}`;
  console.log(`
The service is running.
  dashboard:  ${baseUrl}/ (sign in with the token below)
  base URL:   ${baseUrl}/v1
  WebSocket:  ws://${config.gatewayHost}:${config.gatewayPort}/ws/v1
  token:      ${token}
  NATS:       ${config.natsUrl}
  ClickHouse: ${config.clickhouseUrl} (database ${config.clickhouseDatabase})
  metrics:    http://${config.metricsHost}:{${metricsPorts.gateway},${metricsPorts.host},${metricsPorts.storage}}/metrics (gateway, actor host, storage; also /livez, /readyz)
  logs:       ${dataDir}/*.log

Try: curl -H 'Authorization: Bearer ${token}' ${baseUrl}/v1/sessions`);
  if (withDemo) {
    // The service is useful without its demo: a demo that cannot start is reported, not fatal.
    const starting = startDemo({ baseUrl, token, dir: join(dataDir, 'demo'), config });
    // A Ctrl-C while it starts waits for it, then stops it: nothing it started is left behind.
    started.push({ stop: () => starting.then((demo) => demo.stop(), () => undefined) });
    try {
      const demo = await starting;
      console.log(`
The demo is running: a ${Math.round(demo.clipSeconds)}-second clip of faces and speech, looped as a live stream.
  watch it:   ${demo.dashboardUrl} (sign in with the token above; the charts fill within a minute)
  session:    ${demo.session}
  stream:     ${demo.streamUri}
  without it: npm start -- --no-demo, or DEMO=false npm start`);
    } catch (error) {
      console.error(`\nThe demo did not start; the service runs without it. Why:\n${(error as Error).message}`);
    }
  }
  console.log('\nCtrl-C stops everything.');
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

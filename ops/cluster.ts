// `npm run cluster`: the whole service as a small cluster on this machine (ops/stack/cluster.ts),
// its data under var/cluster. Prints where each part answers and a bearer token; Ctrl-C stops
// it all. Service processes that crash are started again (ops/stack/service-process.ts); a NATS,
// ZooKeeper or ClickHouse node that crashes is started again, one killed from outside is left
// down, so what the loss of one does can be watched (ops/stack/cluster-node.ts).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { readConfig } from '../bus/config.ts';
import { startCluster, type Cluster } from './stack/cluster.ts';
import { developmentToken } from './stack/dev-token.ts';

const config = readConfig();
const dir = join(config.varDir, 'cluster');
const tokensFile = config.authTokensFile ?? join(dir, 'tokens.json');

let cluster: Cluster | undefined;

async function stopAll(): Promise<void> {
  await cluster?.stop();
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.log('stopping...');
    void stopAll().finally(() => process.exit(0));
  });
}

try {
  mkdirSync(dir, { recursive: true });
  const token = developmentToken(tokensFile);
  console.log('starting 3 NATS servers, 3 ZooKeeper servers, 4 ClickHouse servers, 2 storage services, 2 actor hosts and 2 gateways...');
  cluster = await startCluster({ dir, projectRoot: config.projectRoot, env: { ...process.env, AUTH_TOKENS_FILE: tokensFile }, gatewayPort: config.gatewayPort });
  for (const member of [...cluster.storage, ...cluster.hosts, ...cluster.gateways]) member.keepRunning((message) => console.error(message));
  const [first] = cluster.gateways;
  console.log(`
The cluster is running.
  dashboard:   ${first!.baseUrl}/ (sign in with the token below)
  gateways:    ${cluster.gateways.map((gateway) => `${gateway.baseUrl}/v1`).join('  ')}
  token:       ${token}
  NATS:        ${cluster.nats.url} (JetStream, 3 replicas)
  ClickHouse:  ${cluster.clickhouse.urls.join(',')} (cluster ${cluster.clickhouse.name}: 2 shards x 2 replicas, database ${config.clickhouseDatabase})
               the service as ${cluster.clickhouse.users.service.username}; read as ${cluster.clickhouse.users.analyst.username} with password ${cluster.clickhouse.users.analyst.password} (production's users, ops/production/clickhouse/users.d)
  ZooKeeper:   ${cluster.clickhouse.zookeeper.members.map((member) => `${member.host}:${member.port}`).join(',')} (an ensemble of 3)
  metrics:     ${[...cluster.storage, ...cluster.hosts, ...cluster.gateways].map((member) => `${member.id} ${member.metricsUrl}/metrics`).join('\n               ')}
  logs:        ${dir}

Try: curl -H 'Authorization: Bearer ${token}' ${first!.baseUrl}/v1/sessions
Ctrl-C stops everything.`);
} catch (error) {
  console.error((error as Error).message);
  await stopAll();
  process.exit(1);
}

// `npm run test:servers`: NATS and ClickHouse for the tests, left running until Ctrl-C, so that
// `node --import tsx ops/test.ts <regex>` runs one file or one folder against them at once: no
// setup, no type check, no servers to start. While they run, the runner uses them (one lane).
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readConfig } from '../bus/config.ts';
import { startClickHouse } from './stack/clickhouse.ts';
import { startNats } from './stack/nats.ts';
import { freePort } from './stack/ports.ts';
import { SHORT_LIVED_MERGED_PARTS } from './testing/clickhouse-parts.ts';
import { testServersFile, type TestServers } from './testing/test-servers.ts';

const config = readConfig();
const dir = join(config.varDir, 'test', `servers-${process.pid}`);
const nats = await startNats({ dir: join(dir, 'nats'), port: await freePort(), maxFileStore: '2GB' });
const clickhouse = await startClickHouse({ dir: join(dir, 'clickhouse'), httpPort: await freePort(), tcpPort: await freePort(), configFiles: SHORT_LIVED_MERGED_PARTS }).catch(async (error) => {
  await nats.stop();
  throw error;
});
const file = testServersFile(config.varDir);
const servers: TestServers = { pid: process.pid, natsUrl: nats.url, clickhouseUrl: clickhouse.url };
writeFileSync(file, JSON.stringify(servers));
console.log(`Test servers running (NATS ${nats.url}, ClickHouse ${clickhouse.url}); Ctrl-C stops them.
Run a file or a folder against them:  node --import tsx ops/test.ts 'integration/sessions-api'`);

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  rmSync(file, { force: true });
  await clickhouse.stop();
  await nats.stop();
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);

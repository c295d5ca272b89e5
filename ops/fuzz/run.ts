// The long fuzz run: starts NATS, ClickHouse and the service on free loopback ports, sends
// `runs` random and hostile cases (REST and WebSocket, seven to three), prints every failing
// case with its request and answer, the seed to replay the run, and the count.
// Usage: node --import tsx ops/fuzz/run.ts [runs=10000] [seed]
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { readConfig } from '../../bus/config.ts';
import { startServices } from '../support/services.ts';
import { startClickHouse } from '../stack/clickhouse.ts';
import { startNats } from '../stack/nats.ts';
import { freePort } from '../stack/ports.ts';
import { checkRestCase, restCase } from './rest.ts';
import { FUZZ_ENV, FuzzTarget } from './target.ts';
import { checkWsCase, wsCase } from './ws.ts';

const config = readConfig();

const runs = Number(process.argv[2] ?? 10_000);
const seed = Number(process.argv[3] ?? Date.now() % 2 ** 31);
if (!Number.isInteger(runs) || runs < 1 || !Number.isInteger(seed)) {
  console.error('usage: node --import tsx ops/fuzz/run.ts [runs=10000] [seed]');
  process.exit(2);
}

const dir = join(config.varDir, 'fuzz', `stack-${process.pid}`);
const nats = await startNats({ dir: join(dir, 'nats'), port: await freePort() });
const clickhouse = await startClickHouse({ dir: join(dir, 'clickhouse'), httpPort: await freePort(), tcpPort: await freePort() });
const env = { ...FUZZ_ENV, NATS_URL: nats.url, CLICKHOUSE_URL: clickhouse.url, CLICKHOUSE_DATABASE: 'emotions_fuzz' };
const services = await startServices({ name: 'fuzz-run', env });

const failures: string[] = [];
let sent = 0;
try {
  const target = await FuzzTarget.prepare(services);
  const collect = async (check: () => Promise<void>) => {
    sent++;
    await check().catch((error: Error) => {
      failures.push(error.message);
      console.log(`FAILED case ${sent}: ${error.message}\n`);
    });
    if (sent % 500 === 0) console.log(`${sent} cases, ${failures.length} failed`);
  };
  const restRuns = Math.ceil(runs * 0.7);
  await fc.assert(fc.asyncProperty(restCase(target), (c) => collect(() => checkRestCase(target, c))), { numRuns: restRuns, seed });
  await fc.assert(fc.asyncProperty(wsCase(target), (c) => collect(() => checkWsCase(target, c))), { numRuns: runs - restRuns, seed });
} finally {
  await services.stop();
  await Promise.all([nats.stop(), clickhouse.stop()]);
  rmSync(dir, { recursive: true, force: true });
}
console.log(`seed ${seed}: ${sent} cases sent, ${failures.length} failed (service logs: ${join(config.varDir, 'test', 'services')})`);
process.exit(failures.length ? 1 : 0);

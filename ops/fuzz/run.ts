// The long fuzz run: starts NATS, ClickHouse and the service on free loopback ports, sends
// `runs` random and hostile cases (REST and WebSocket, seven to three), prints every failing
// case with its request and answer, the seed to replay the run, and the count; then the abuse
// scenarios (abuse.ts), each run as two users at once, with what each user saw. The services'
// logs are kept when a case failed.
// Usage: node --import tsx ops/fuzz/run.ts [runs=10000] [seed]
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { readConfig } from '../../bus/config.ts';
import { startServiceStack } from '../support/service-stack.ts';
import { churn, deleteFlood, fanOut, largeRecords, printReport, renameFlood } from './abuse.ts';
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
const stack = await startServiceStack({ name: 'fuzz-run', dir, database: 'emotions_fuzz', env: FUZZ_ENV });
const { services } = stack;

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
  for (const run of [churn, deleteFlood, largeRecords, renameFlood, fanOut]) {
    const report = await run(services);
    console.log(printReport(report));
    failures.push(...report.failures);
  }
} finally {
  await stack.stop();
  // The services' logs are kept when a case failed: they tell what the service made of it.
  if (failures.length === 0) stack.removeFiles();
  else rmSync(dir, { recursive: true, force: true });
}
console.log(`seed ${seed}: ${sent} cases sent, ${failures.length} failed${failures.length ? ` (service logs: ${services.logDir})` : ''}`);
process.exit(failures.length ? 1 : 0);

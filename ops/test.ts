// The whole test suite: starts NATS and ClickHouse on free loopback ports with their data in a
// fresh folder, runs every test file (unit and integration) against them, stops what it
// started; then runs the checks of stored results again on a cluster (three NATS servers,
// ClickHouse as 2 shards x 2 replicas), and closes with the line "N passed, N failed".
// An argument limits both runs to the test files whose path under test/ matches it.
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { readConfig } from '../bus/config.ts';
import { startClickHouse } from './stack/clickhouse.ts';
import { startClickHouseCluster } from './stack/clickhouse-cluster.ts';
import { startNats } from './stack/nats.ts';
import { startNatsCluster } from './stack/nats-cluster.ts';
import { freePort } from './stack/ports.ts';

const config = readConfig();

const pattern = process.argv[2] ?? '\\.test\\.ts$';
// The tests of what is stored and read back (timelines, lists, analyst queries, deletion), which
// must hold on a cluster as on one server.
const RESULT_CHECKS = ['storage-timelines', 'clickhouse-current', 'sessions-list', 'sessions-index', 'events-api', 'voice-features', 'transcript-sentiment']
  .map((name) => `integration/${name}.test.ts`)
  .filter((file) => new RegExp(pattern).test(file));
// Per run, so that runs side by side never share a server or a data folder.
const dir = join(config.varDir, 'test', `stack-${process.pid}`);

interface Outcome {
  passed: number;
  failed: number;
}

/** Runs uvu on the test files matching `files` with `env`, echoing its output. */
function runTests(files: string, env: NodeJS.ProcessEnv): Promise<Outcome> {
  let output = '';
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'node_modules/uvu/bin.js', 'test', files], {
      cwd: config.projectRoot,
      env: { ...process.env, CLICKHOUSE_DATABASE: 'emotions_test', ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    child.stdout.on('data', (chunk: Buffer) => {
      process.stdout.write(chunk);
      output += chunk.toString();
    });
    child.once('exit', (code) => {
      const plain = output.replace(/\x1b\[[0-9;]*m/g, '');
      const total = Number(/Total:\s+(\d+)/.exec(plain)?.[1] ?? 0);
      const passed = Number(/Passed:\s+(\d+)/.exec(plain)?.[1] ?? 0);
      // A run that ended badly without counting anything counts as one failure.
      resolve({ passed, failed: Math.max(total - passed, code === 0 && total > 0 ? 0 : 1) });
    });
  });
}

async function onOneServer(): Promise<Outcome> {
  const nats = await startNats({ dir: join(dir, 'nats'), port: await freePort(), maxFileStore: '2GB' });
  try {
    const clickhouse = await startClickHouse({ dir: join(dir, 'clickhouse'), httpPort: await freePort(), tcpPort: await freePort() });
    try {
      return await runTests(pattern, { NATS_URL: nats.url, CLICKHOUSE_URL: clickhouse.url });
    } finally {
      await clickhouse.stop();
    }
  } finally {
    await nats.stop();
  }
}

async function onCluster(files: string): Promise<Outcome> {
  console.log('\nThe checks of stored results again, on a cluster: 3 NATS servers, ClickHouse 2 shards x 2 replicas');
  const nats = await startNatsCluster({ dir: join(dir, 'cluster') });
  try {
    const clickhouse = await startClickHouseCluster({ dir: join(dir, 'cluster'), name: 'emo', shards: 2, replicas: 2 });
    try {
      return await runTests(files, {
        NATS_URL: nats.url,
        NATS_REPLICAS: '3',
        CLICKHOUSE_URL: clickhouse.urls.join(','),
        CLICKHOUSE_CLUSTER: clickhouse.name,
      });
    } finally {
      await clickhouse.stop();
    }
  } finally {
    await nats.stop();
  }
}

const outcomes = [await onOneServer()];
if (RESULT_CHECKS.length > 0) outcomes.push(await onCluster(`^(${RESULT_CHECKS.join('|').replace(/\./g, '\\.')})$`));

const passed = outcomes.reduce((sum, outcome) => sum + outcome.passed, 0);
const failed = outcomes.reduce((sum, outcome) => sum + outcome.failed, 0);
// The servers' data and logs are kept only when something failed.
if (failed === 0) rmSync(dir, { recursive: true, force: true });
else console.log(`server data and logs: ${dir}; service logs: ${join(config.varDir, 'test', 'services')}`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);

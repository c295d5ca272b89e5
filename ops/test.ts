// The whole test suite: starts NATS and ClickHouse on free loopback ports with their data in a
// fresh folder, runs every test file (unit and integration) against them, stops what it
// started; then runs the checks of stored results again on a cluster (three NATS servers,
// ClickHouse as 2 shards x 2 replicas), and closes with what failed and the line
// "N passed, N failed". Each test file runs in a process of its own, so one that crashes fails
// alone rather than ending the run. An argument limits both runs to the test files whose path
// under test/ matches it.
import { spawn } from 'node:child_process';
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { readConfig } from '../bus/config.ts';
import { startClickHouse } from './stack/clickhouse.ts';
import { startClickHouseCluster } from './stack/clickhouse-cluster.ts';
import { startNats } from './stack/nats.ts';
import { startNatsCluster } from './stack/nats-cluster.ts';
import { freePort } from './stack/ports.ts';

const config = readConfig();

const pattern = new RegExp(process.argv[2] ?? '.');
const testDir = join(config.projectRoot, 'test');
const testFiles = readdirSync(testDir, { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.test.ts') && pattern.test(file))
  .sort();
// The tests of what is stored and read back (timelines, lists, analyst queries, deletion), which
// must hold on a cluster as on one server.
const RESULT_CHECKS = ['storage-timelines', 'clickhouse-current', 'sessions-list', 'sessions-index', 'events-api', 'voice-features', 'transcript-sentiment']
  .map((name) => `integration/${name}.test.ts`)
  .filter((file) => testFiles.includes(file));
// Per run, so that runs side by side never share a server or a data folder.
const dir = join(config.varDir, 'test', `stack-${process.pid}`);
// Lines of a file's output that the summary repeats when no FAIL line says what went wrong.
const TAIL_LINES = 12;

interface Outcome {
  passed: number;
  failed: number;
  /** What failed, a few lines each, for the summary at the end. */
  failures: string[];
}

const plain = (text: string) => text.replace(/\x1b\[[0-9;]*m/g, '');

/** Runs one test file with uvu and `env`, echoing its output. */
function runFile(file: string, env: NodeJS.ProcessEnv): Promise<Outcome> {
  let output = '';
  return new Promise((resolve) => {
    const exactly = `^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`;
    const child = spawn(process.execPath, ['--import', 'tsx', 'node_modules/uvu/bin.js', 'test', exactly], {
      cwd: config.projectRoot,
      env: { ...process.env, CLICKHOUSE_DATABASE: 'emotions_test', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const echo = (to: NodeJS.WriteStream) => (chunk: Buffer) => {
      to.write(chunk);
      output += chunk.toString();
    };
    child.stdout.on('data', echo(process.stdout));
    child.stderr.on('data', echo(process.stderr));
    child.once('exit', (code, signal) => {
      const text = plain(output);
      const total = Number(/Total:\s+(\d+)/.exec(text)?.[1] ?? 0);
      const passed = Number(/Passed:\s+(\d+)/.exec(text)?.[1] ?? 0);
      const failures = [...text.matchAll(/^\s*FAIL\s+(.*)\n\s*(.*)/gm)].map(([, name, reason]) => `${file} ${name}: ${reason}`);
      // A file that ended badly without counting its tests counts as one failure.
      const crashed = total === 0 || code !== 0;
      const failed = crashed ? Math.max(1, total - passed) : total - passed;
      // Tests that did not pass with no FAIL line to say why: the file crashed, or a hook
      // failed silently (uvu exits 0 then). Its last lines are the best account there is.
      if (failed > 0 && failures.length === 0) {
        const tail = text.trimEnd().split('\n').slice(-TAIL_LINES).join('\n    ');
        const what = crashed ? `ended (${signal ?? `exit code ${code}`}) before its tests were counted` : `did not run ${failed} of its ${total} tests`;
        failures.push(`${file} ${what}:\n    ${tail}`);
      }
      resolve({ passed, failed, failures });
    });
  });
}

async function runTests(files: string[], env: NodeJS.ProcessEnv): Promise<Outcome> {
  const outcome: Outcome = { passed: 0, failed: 0, failures: [] };
  for (const file of files) {
    const { passed, failed, failures } = await runFile(file, env);
    outcome.passed += passed;
    outcome.failed += failed;
    outcome.failures.push(...failures);
  }
  return outcome;
}

async function onOneServer(): Promise<Outcome> {
  const nats = await startNats({ dir: join(dir, 'nats'), port: await freePort(), maxFileStore: '2GB' });
  try {
    const clickhouse = await startClickHouse({ dir: join(dir, 'clickhouse'), httpPort: await freePort(), tcpPort: await freePort() });
    try {
      return await runTests(testFiles, { NATS_URL: nats.url, CLICKHOUSE_URL: clickhouse.url });
    } finally {
      await clickhouse.stop();
    }
  } finally {
    await nats.stop();
  }
}

async function onCluster(files: string[]): Promise<Outcome> {
  console.log('\nThe checks of stored results again, on a cluster: 3 NATS servers, ClickHouse 2 shards x 2 replicas');
  const nats = await startNatsCluster({ dir: join(dir, 'cluster') });
  try {
    const clickhouse = await startClickHouseCluster({ dir: join(dir, 'cluster'), name: 'emo', shards: 2, replicas: 2 });
    try {
      const outcome = await runTests(files, {
        NATS_URL: nats.url,
        NATS_REPLICAS: '3',
        CLICKHOUSE_URL: clickhouse.urls.join(','),
        CLICKHOUSE_CLUSTER: clickhouse.name,
      });
      return { ...outcome, failures: outcome.failures.map((failure) => `on the cluster: ${failure}`) };
    } finally {
      await clickhouse.stop();
    }
  } finally {
    await nats.stop();
  }
}

const outcomes = [await onOneServer()];
if (RESULT_CHECKS.length > 0) outcomes.push(await onCluster(RESULT_CHECKS));

const passed = outcomes.reduce((sum, outcome) => sum + outcome.passed, 0);
const failed = outcomes.reduce((sum, outcome) => sum + outcome.failed, 0);
// The servers' data and logs are kept only when something failed.
if (failed === 0) rmSync(dir, { recursive: true, force: true });
else {
  console.log(`\nFailed:\n${outcomes.flatMap((outcome) => outcome.failures).map((failure) => `  ${failure}`).join('\n')}`);
  console.log(`server data and logs: ${dir}; service logs: ${join(config.varDir, 'test', 'services')}`);
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);

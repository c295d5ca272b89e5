// The test suite. `npm test` runs test/unit and test/integration: unit files need no server;
// integration files run in lanes side by side, each lane with its own NATS and its own
// database on one ClickHouse, all on free loopback ports with their data in a fresh folder.
// `npm run test:cluster` (`--cluster`) runs test/cluster in lanes (each file starts the cluster it
// needs) beside the checks of stored results again on a cluster of its own (three NATS
// servers, ClickHouse 2 shards x 2 replicas). Both end with what failed, the slowest files,
// the time taken and the line "N passed, N failed" (", N skipped" added when tests were
// skipped). An argument limits the run to the test
// files whose path under test/ matches it.
//
// Each file runs in a process of its own with a time limit, so one that crashes or hangs fails
// alone, and its output is printed whole when it ends. With --type-check (`npm test` and
// `npm run test:cluster`) the project's type check runs beside them and counts as one test.
import { readdirSync, rmSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { readConfig } from '../bus/config.ts';
import { bundledTogether } from '../bus/typescript-bundle.ts';
import { startClickHouse } from './stack/clickhouse.ts';
import { startClickHouseCluster } from './stack/clickhouse-cluster.ts';
import { startNats } from './stack/nats.ts';
import { startNatsCluster } from './stack/nats-cluster.ts';
import { freePort } from './stack/ports.ts';
import { reportRun } from './testing/report.ts';
import { removeOrphanCgroups } from './stack/cgroups.ts';
import { removeOrphanRules } from './testing/network-rules.ts';
import { ChildCpu } from './testing/child-cpu.ts';
import { CpuRoom } from './testing/cpu-room.ts';
import { deleteStreams } from './testing/fresh-lane.ts';
import { runFile, type FileOutcome } from './testing/run-file.ts';
import { Scheduler, type Queue } from './testing/schedule.ts';
import { runningTestServers } from './testing/test-servers.ts';
import { typeCheck } from './testing/type-check.ts';
import { SHORT_LIVED_MERGED_PARTS } from './testing/clickhouse-parts.ts';
import { readRunnerConfig } from './testing/runner-config.ts';

const config = readConfig();
const runner = readRunnerConfig();
const started = Date.now();

const args = process.argv.slice(2);
const clusterStage = args.includes('--cluster');
const pattern = new RegExp(args.find((arg) => !arg.startsWith('--')) ?? '.');
const testDir = join(config.projectRoot, 'test');
const testFiles = readdirSync(testDir, { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.test.ts') && pattern.test(file))
  .sort();
// Made together while the servers start: a file missing from it (one that does not compile
// fails the whole build) is bundled alone as it starts, and fails alone.
const testBundles = bundledTogether('test-files', testFiles.map((file) => join(testDir, file))).catch((error: Error) => {
  console.log(`The test files could not be bundled together (${error.message.split('\n').slice(0, 2).join(' ')}); each is bundled as it starts.`);
  return new Map<string, string>();
});
// The tests of what is stored and read back (timelines, lists, analyst queries, deletion), which
// must hold on a cluster as on one server.
const RESULT_CHECKS = ['storage-timelines', 'clickhouse-current', 'sessions-list', 'sessions-index', 'events-api', 'voice-features', 'transcript-sentiment']
  .map((name) => `integration/${name}.test.ts`)
  .filter((file) => testFiles.includes(file));
// Per run, so that runs side by side never share a server or a data folder.
const dir = join(config.varDir, 'test', `stack-${process.pid}`);
const logDir = join(config.varDir, 'test', 'output');
const fileLimitMs = runner.fileLimitSeconds * 1000;
const childCpu = new ChildCpu();

interface Lane {
  name: string;
  env: NodeJS.ProcessEnv;
  /** The queues this lane takes files from, in order. */
  takes: readonly Queue[];
  /** Starts a file only while the cores have room. */
  whenRoom?: CpuRoom;
  /** Leaves the lane's servers as the next file should find them, after a file that used them. */
  afterServerFile?: () => Promise<void>;
}

/** Runs `files` on `lanes`, each lane one file at a time; prints each file's output as it ends. */
async function runLanes(files: string[], laneList: Lane[]): Promise<FileOutcome[]> {
  const scheduler = new Scheduler(files);
  const nextFor = async (lane: Lane) => {
    while (lane.whenRoom && scheduler.hasFileFor(lane.takes) && !lane.whenRoom.hasRoom()) await sleep(1000);
    return scheduler.next(lane.takes);
  };
  const outcomes: FileOutcome[] = [];
  await Promise.all(
    laneList.map(async (lane) => {
      for (let file = await nextFor(lane); file; file = await nextFor(lane)) {
        const bundle = (await testBundles).get(join(testDir, file));
        const outcome = await runFile({ projectRoot: config.projectRoot, file, bundle, env: { ...process.env, ...lane.env }, limitMs: fileLimitMs, logDir, childCpu });
        const seconds = (outcome.ms / 1000).toFixed(1);
        console.log(`\n── ${file} (${lane.name}, ${seconds} s, ${outcome.cpuSeconds.toFixed(0)} s of CPU, ${outcome.failed === 0 ? 'passed' : `${outcome.failed} failed`})\n${outcome.output.trimEnd()}`);
        outcomes.push(outcome);
        // A file that took the servers down may leave nothing to delete: the next one finds out.
        if (!file.startsWith('unit/')) await lane.afterServerFile?.().catch((error: Error) => console.log(`(${lane.name}: its streams were not deleted: ${error.message})`));
      }
    }),
  );
  return outcomes;
}

type Stop = () => Promise<void>;

async function onServers(files: string[], stops: Stop[]): Promise<FileOutcome[]> {
  const needServers = files.some((file) => !file.startsWith('unit/'));
  const running = runningTestServers(config.varDir);
  if (needServers && running) {
    console.log(`Using the servers of \`npm run test:servers\` (process ${running.pid}), one file at a time.`);
    const env = { NATS_URL: running.natsUrl, CLICKHOUSE_URL: running.clickhouseUrl, CLICKHOUSE_DATABASE: 'emotions_test' };
    return runLanes(files, [{ name: 'test servers', env, takes: ['media', 'servers', 'unit'], afterServerFile: () => deleteStreams(running.natsUrl) }]);
  }
  const laneList: Lane[] = [];
  let clickhouseUrl = '';
  if (needServers) {
    const clickhouse = await startClickHouse({ dir: join(dir, 'clickhouse'), httpPort: await freePort(), tcpPort: await freePort(), configFiles: SHORT_LIVED_MERGED_PARTS });
    stops.push(clickhouse.stop);
    clickhouseUrl = clickhouse.url;
  }
  const lanes = needServers ? runner.lanes : availableParallelism();
  const { steadyLanes } = runner;
  const room = needServers && lanes > steadyLanes ? new CpuRoom() : undefined;
  const why = needServers ? `TEST_LANES, by default two for each of the ${availableParallelism()} cores this machine has and one more` : 'one per core';
  console.log(`${lanes} lanes side by side (${why})${room ? `; past ${steadyLanes}, a lane starts a file only while the cores have room` : ''}.`);
  if (room) stops.push(async () => room.stop());
  for (let i = 0; i < lanes; i++) {
    const name = `lane ${String.fromCharCode(97 + i)}`;
    let env: NodeJS.ProcessEnv = {};
    let afterServerFile: Lane['afterServerFile'];
    if (needServers) {
      const nats = await startNats({ dir: join(dir, `nats-${i}`), port: await freePort(), maxFileStore: '2GB' });
      stops.push(nats.stop);
      env = { NATS_URL: nats.url, CLICKHOUSE_URL: clickhouseUrl, CLICKHOUSE_DATABASE: `emotions_test_${i}` };
      afterServerFile = () => deleteStreams(nats.url);
    }
    // The first lane runs the media-heavy files, one at a time; every lane helps with the rest.
    laneList.push({ name, env, takes: i === 0 ? ['media', 'servers', 'unit'] : ['servers', 'unit'], whenRoom: i >= steadyLanes ? room : undefined, afterServerFile });
  }
  return runLanes(files, laneList);
}

async function onCluster(files: string[], stops: Stop[]): Promise<FileOutcome[]> {
  const nats = await startNatsCluster({ dir: join(dir, 'cluster') });
  stops.push(nats.stop);
  const clickhouse = await startClickHouseCluster({ dir: join(dir, 'cluster'), name: 'emo', shards: 2, replicas: 2, configFiles: SHORT_LIVED_MERGED_PARTS });
  stops.push(clickhouse.stop);
  const env = {
    NATS_URL: nats.url,
    NATS_REPLICAS: '3',
    ...clickhouse.serviceEnv,
    CLICKHOUSE_DATABASE: 'emotions_test',
  };
  const outcomes = await runLanes(files, [{ name: 'on the cluster', env, takes: ['media', 'servers'] }]);
  return outcomes.map((outcome) => ({ ...outcome, failures: outcome.failures.map((failure) => `on the cluster: ${failure}`) }));
}

// Network rules left by a run killed before it could remove them.
const orphanRules = removeOrphanRules();
if (orphanRules > 0) console.log(`Removed ${orphanRules} network rule(s) left by test runs that were killed.`);
// Empty cgroups of local clusters whose run was killed (ops/stack/cgroups.ts).
const orphanCgroups = removeOrphanCgroups();
if (orphanCgroups > 0) console.log(`Removed ${orphanCgroups} cgroup(s) left by test runs that were killed.`);

const stops: Stop[] = [];
let outcomes: FileOutcome[] = [];
const typeChecked = args.includes('--type-check')
  ? typeCheck(config.projectRoot, childCpu).then((outcome) => {
      console.log(`\n── ${outcome.file} (${(outcome.ms / 1000).toFixed(1)} s, ${outcome.cpuSeconds.toFixed(0)} s of CPU, ${outcome.failed === 0 ? 'passed' : 'failed'})\n${outcome.output}`.trimEnd());
      return [outcome];
    })
  : Promise.resolve([]);
try {
  if (clusterStage) {
    // The cluster files start their own clusters; the result checks run on one started here.
    const clusterFiles = testFiles.filter((file) => file.startsWith('cluster/'));
    const clusterLanes = Array.from({ length: runner.clusterLanes }, (_, i): Lane => ({ name: `cluster files ${i + 1}`, env: {}, takes: ['servers'] }));
    const runs = [runLanes(clusterFiles, clusterLanes)];
    if (RESULT_CHECKS.length > 0) runs.push(onCluster(RESULT_CHECKS, stops));
    outcomes = (await Promise.all(runs)).flat();
  } else {
    outcomes = await onServers(testFiles.filter((file) => !file.startsWith('cluster/')), stops);
  }
  outcomes.push(...(await typeChecked));
} finally {
  for (const stop of stops.reverse()) await stop().catch(() => {});
}

const failed = reportRun(outcomes, Date.now() - started);
// The servers' data and logs are kept only when something failed.
if (failed === 0) rmSync(dir, { recursive: true, force: true });
else console.log(`server data and logs: ${dir}; service logs: ${join(config.varDir, 'test', 'services')}; each file's output: ${logDir}`);
process.exit(failed === 0 ? 0 : 1);

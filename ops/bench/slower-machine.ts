// The test suite on a machine `factor` times slower than this one: the runner and everything it
// starts run in a CPU control group allowed cores / factor of this machine's cores, in 10 ms
// periods. It models a machine with less CPU to share, not one whose every thread is slower: a
// lone thread still runs at this machine's speed while the others wait. Needs root.
//   node --import tsx ops/bench/slower-machine.ts [factor=1.6] [test runner arguments...]
// For instance `... 1.6 --type-check` (the first stage, as `npm test` runs it after its setup)
// or `... 1.6 integration/face-emotions`.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const [factorText = '1.6', ...runnerArgs] = process.argv.slice(2);
const factor = Number(factorText);
if (!(factor >= 1)) throw new Error(`factor: a number of at least 1, not ${factorText}`);

const PERIOD_US = 10_000;
const cores = availableParallelism() / factor;

/** A group of cgroup v2 where its cpu controller is enabled, else of v1's cpu controller: the file a process joins it by. */
function makeGroup(name: string): { dir: string; tasks: string } {
  const quota = Math.round(cores * PERIOD_US);
  const root = '/sys/fs/cgroup';
  const control = join(root, 'cgroup.subtree_control');
  if (existsSync(control) && readFileSync(control, 'utf8').split(/\s+/).includes('cpu')) {
    const dir = join(root, name);
    mkdirSync(dir);
    writeFileSync(join(dir, 'cpu.max'), `${quota} ${PERIOD_US}`);
    return { dir, tasks: join(dir, 'cgroup.procs') };
  }
  if (!existsSync(join(root, 'cpu', 'cpu.cfs_quota_us'))) throw new Error('no cgroup cpu controller to hold the run to fewer cores');
  const dir = join(root, 'cpu', name);
  mkdirSync(dir);
  writeFileSync(join(dir, 'cpu.cfs_period_us'), String(PERIOD_US));
  writeFileSync(join(dir, 'cpu.cfs_quota_us'), String(quota));
  return { dir, tasks: join(dir, 'tasks') };
}

const group = makeGroup(`emo-slower-machine-${process.pid}`);
console.log(`${cores.toFixed(2)} of ${availableParallelism()} cores (1 / ${factor}), in ${group.dir}`);
const started = Date.now();
// The shell joins the group, then becomes the runner: all the runner starts is held to it too.
const run = spawn('sh', ['-c', `echo $$ > ${group.tasks}; exec node --import tsx ops/test.ts "$@"`, 'sh', ...runnerArgs], { stdio: 'inherit' });
const code = await new Promise<number>((resolve) => run.on('exit', (exit) => resolve(exit ?? 1)));
console.log(`on ${cores.toFixed(2)} cores: ${((Date.now() - started) / 1000).toFixed(0)} s; the runner exited ${code}`);
// What the runner stopped may take a moment to be gone, and the group is removed only empty.
for (let tries = 0; readFileSync(group.tasks, 'utf8').trim() !== '' && tries < 100; tries++) await sleep(100);
rmdirSync(group.dir);
process.exit(code);

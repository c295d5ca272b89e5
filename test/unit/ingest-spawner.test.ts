// The decoder spawner's protocol with real short-lived processes: a process started through it
// is the spawner's child, not ours; its stdout, stderr and exit come back; it is killed on
// request; a program that cannot run says so; a spawner that dies loses its runs and is started
// again; one let go of kills what it still runs.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { readConfig } from '../../bus/config.ts';
import { createLog } from '../../bus/log.ts';
import { waitUntil } from '../../ops/stack/process.ts';
import { DecoderSpawner, SPAWNER_LOST, type DecoderExit, type DecoderProcess } from '../../actors/ingest/decoder-spawner.ts';
import { decoderEnvironment } from '../../actors/ingest/decoder-environment.ts';
import { parentOf } from '../../ops/testing/process-tree.ts';

const config = readConfig();
const quiet = createLog({ ...config, logLevel: 'silent' });
const env = decoderEnvironment();
let decoders: DecoderSpawner;

interface Outcome {
  stdout: string;
  stderr: string;
  unstartable: string[];
  exit: DecoderExit;
}

function outcome(run: DecoderProcess): Promise<Outcome> {
  const seen = { stdout: '', stderr: '', unstartable: [] as string[] };
  run.on('stdout', (text) => (seen.stdout += text));
  run.on('stderr', (text) => (seen.stderr += text));
  run.on('unstartable', (message) => seen.unstartable.push(message));
  return new Promise((resolve) => run.once('exit', (exit) => resolve({ ...seen, exit })));
}


/** Alive and not a zombie (one its parent has yet to reap). */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Waits until `run` has a pid (the spawner has reported it started). */
async function started(run: DecoderProcess): Promise<number> {
  await waitUntil('the process to start', async () => run.pid !== undefined, 10_000);
  return run.pid as number;
}

test.before(async () => {
  decoders = await DecoderSpawner.start({ runDir: join(config.varDir, 'run'), log: quiet });
});

test.after(async () => {
  await decoders.close();
});

test('a process started through the spawner is its child; stdout, stderr and the exit come back in order', async () => {
  const run = decoders.run({ file: 'sh', args: ['-c', 'echo "{\\"streams\\": []}"; echo oops >&2; sleep 0.2; exit 3'], env, stdout: true });
  const result = outcome(run);
  const pid = await started(run);
  assert.is(parentOf(pid), decoders.pid, 'the spawner started it');
  assert.is.not(parentOf(pid), process.pid);
  assert.equal(await result, { stdout: '{"streams": []}\n', stderr: 'oops\n', unstartable: [], exit: { code: 3, signal: null } });
});

test('media sockets are made in a directory only the service user reads, under the run dir', () => {
  assert.is(statSync(decoders.socketDir).mode & 0o777, 0o700);
  assert.ok(decoders.socketDir.startsWith(join(config.varDir, 'run', 'decoders-')));
  const audio = decoders.socketPath('audio');
  assert.ok(audio.startsWith(`${decoders.socketDir}/`) && audio.endsWith('-audio.sock'));
  assert.is.not(decoders.socketPath('audio'), audio);
});

test('stdout goes nowhere unless asked for', async () => {
  const result = await outcome(decoders.run({ file: 'sh', args: ['-c', 'echo hidden; echo shown >&2'], env }));
  assert.is(result.stdout, '');
  assert.is(result.stderr, 'shown\n');
  assert.equal(result.exit, { code: 0, signal: null });
});

test('the environment is the one given, nothing of ours', async () => {
  const result = await outcome(decoders.run({ file: 'sh', args: ['-c', 'env'], env: { PATH: env.PATH ?? '/usr/bin:/bin', ONLY: 'this' }, stdout: true }));
  const names = result.stdout.split('\n').filter(Boolean).map((line) => line.split('=')[0]).filter((name) => name !== 'PWD' && name !== 'SHLVL' && name !== '_');
  assert.equal(names.sort(), ['ONLY', 'PATH']);
});

test('kill: SIGTERM and SIGKILL reach the process and its exit says so', async () => {
  for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
    const run = decoders.run({ file: 'sleep', args: ['30'], env });
    const result = outcome(run);
    await started(run);
    run.kill(signal);
    assert.equal((await result).exit, { code: null, signal });
  }
});

test('a program that cannot run says why, then exits', async () => {
  const result = await outcome(decoders.run({ file: '/nonexistent/ffprobe', args: [], env }));
  assert.is(result.unstartable.length, 1);
  assert.match(result.unstartable[0] ?? '', /ENOENT/);
  assert.is(result.exit.lost, undefined);
  assert.is.not(result.exit.code, 0);
});

test('a spawner that dies loses its runs, and a new one is started for the next', async () => {
  const before = decoders.pid as number;
  const run = decoders.run({ file: 'sleep', args: ['30'], env });
  const result = outcome(run);
  const orphan = await started(run);
  process.kill(before, 'SIGKILL');
  const { exit } = await result;
  assert.equal(exit, { code: null, signal: null, lost: SPAWNER_LOST });
  // What it ran was left behind without it (the host drops such a decoder's sockets: it fails writing).
  process.kill(orphan, 'SIGKILL');
  await waitUntil('the spawner to be started again', async () => decoders.pid !== undefined && decoders.pid !== before, 30_000);
  const again = await outcome(decoders.run({ file: 'sh', args: ['-c', 'exit 0'], env }));
  assert.equal(again.exit, { code: 0, signal: null });
});

test('a spawner let go of kills what it still runs and exits; its socket directory is removed', async () => {
  const spawner = await DecoderSpawner.start({ runDir: join(config.varDir, 'run'), log: quiet });
  const run = spawner.run({ file: 'sleep', args: ['30'], env });
  const result = outcome(run);
  const pid = await started(run);
  const spawnerPid = spawner.pid as number;
  await spawner.close();
  assert.is((await result).exit.lost, SPAWNER_LOST);
  await waitUntil('the sleep to be gone', async () => !running(pid), 10_000);
  assert.not.ok(running(spawnerPid), 'the spawner exited');
  assert.not.ok(existsSync(spawner.socketDir));
});

test.run();

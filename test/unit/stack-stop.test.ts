// Stopping a process the stack started (ops/stack/process.ts), from a caller that has nothing
// else left to do, as a test file's last hook is: a process deaf to SIGTERM is still killed once
// its grace ends, and one that exits at once does not hold the caller for the rest of its grace
// (test files once lingered 5 s each on it).
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import * as assert from 'uvu/assert';
import { test } from '../../ops/support/uvu.ts';
import { bundled } from '../../bus/typescript-bundle.ts';
import { waitUntil } from '../../ops/stack/process.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Runs a caller that starts `childCode` as a service, stops it with `graceMs` and does nothing
 * more; its child's pid, and whether it ended by itself before `giveUpMs`, when it is killed.
 */
async function stopAndLeave(childCode: string, graceMs: number, giveUpMs = 60_000): Promise<{ child: number; endedByItself: boolean }> {
  // From a bundle, as the service runs it: no loader to start.
  const caller = `import { startService, waitUntil } from ${JSON.stringify(await bundled(join(ROOT, 'ops/stack/process.ts')))};
    const service = startService('child', process.execPath, ['-e', ${JSON.stringify(childCode)}]);
    await waitUntil('the child', async () => service.output().includes('listening'), 10_000);
    console.log(service.pid);
    void service.stop(${graceMs});`;
  const { stdout, killed } = await promisify(execFile)(process.execPath, ['--input-type=module', '--eval', caller], { cwd: ROOT, timeout: giveUpMs })
    .then(({ stdout }) => ({ stdout, killed: false }), (error: { stdout: string; killed?: boolean }) => ({ stdout: error.stdout, killed: error.killed === true }));
  return { child: Number(stdout.trim().split('\n').at(-1)), endedByItself: !killed };
}

/** Whether the process runs, a zombie not reaped yet counting as ended. */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

test('a process deaf to SIGTERM is killed when its grace ends, though its caller has nothing else to do', async () => {
  const { child, endedByItself } = await stopAndLeave("process.on('SIGTERM', () => {}); console.log('listening'); setInterval(() => {}, 1000);", 300);
  assert.ok(child > 0 && endedByItself, 'the caller printed its child and ended');
  await waitUntil('the deaf child to be gone', async () => !running(child), 5000).catch(() => {
    process.kill(child, 'SIGKILL');
    assert.unreachable(`process ${child} outlived its caller`);
  });
});

test('a process that ends at SIGTERM lets its caller exit then, not when the grace runs out', async () => {
  // A grace of ten minutes, which the caller would wait out if the grace held it; it is given one.
  const { child, endedByItself } = await stopAndLeave("console.log('listening'); setInterval(() => {}, 1000);", 600_000);
  assert.ok(endedByItself, 'the caller waited on the grace of a process that had ended');
  assert.not.ok(running(child));
});

test.run();

// The project's type check (tsc --noEmit), run beside the test files rather than before them: on
// a fresh clone it takes some 11 s here (17 s of CPU), while the lanes' first files mostly wait
// for their servers. It counts as one test of the run; its errors are the failure's lines.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { ChildCpu } from './child-cpu.ts';
import type { FileOutcome } from './run-file.ts';

const TYPE_CHECK = 'the type check (tsc --noEmit -p .)';

/** Lines of tsc's output the summary repeats. */
const ERROR_LINES = 20;

export function typeCheck(projectRoot: string, childCpu: ChildCpu): Promise<FileOutcome> {
  const started = Date.now();
  let output = '';
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(projectRoot, 'node_modules', 'typescript', 'bin', 'tsc'), '--noEmit', '-p', '.'], {
      cwd: projectRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const keep = (chunk: Buffer) => void (output += chunk.toString());
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    // Read as the process is reaped, as a test file's is (child-cpu.ts): its output may close later.
    let cpuSeconds = 0;
    child.once('exit', () => (cpuSeconds = childCpu.sinceLast()));
    const finish = (code: number | null, reason?: string) => {
      const passed = code === 0;
      const text = reason ?? output.trimEnd();
      const failures = passed ? [] : [`${TYPE_CHECK} failed (exit code ${code}):\n    ${text.split('\n').slice(0, ERROR_LINES).join('\n    ')}`];
      resolve({ file: TYPE_CHECK, passed: passed ? 1 : 0, failed: passed ? 0 : 1, skipped: 0, ms: Date.now() - started, cpuSeconds, failures, output: text });
    };
    child.once('error', (error) => finish(null, `tsc did not start: ${error.message}`));
    child.once('close', (code) => finish(code));
  });
}

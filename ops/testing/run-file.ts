// Runs one test file with uvu in a process of its own, so that one that crashes fails alone.
// Its output is kept whole and printed once the file ends (files run side by side would
// otherwise interleave), and written to a log. A file that runs past its time limit is killed
// with every process it started, and fails with its last lines.
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { killTree } from './process-tree.ts';

export interface FileOutcome {
  file: string;
  passed: number;
  failed: number;
  ms: number;
  /** What failed, a few lines each, for the summary at the end. */
  failures: string[];
  /** Everything the file printed, colours removed. */
  output: string;
}

export interface FileRun {
  projectRoot: string;
  /** Path under test/. */
  file: string;
  env: NodeJS.ProcessEnv;
  limitMs: number;
  /** Where the file's whole output is written. */
  logDir: string;
}

// Lines of a file's output that the summary repeats when no FAIL line says what went wrong.
const TAIL_LINES = 12;

const plain = (text: string) => text.replace(/\x1b\[[0-9;]*m/g, '');

export function runFile({ projectRoot, file, env, limitMs, logDir }: FileRun): Promise<FileOutcome> {
  const started = Date.now();
  let output = '';
  return new Promise((resolve) => {
    const exactly = `^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`;
    const child = spawn(process.execPath, ['--import', 'tsx', 'node_modules/uvu/bin.js', 'test', exactly], {
      cwd: projectRoot,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const keep = (chunk: Buffer) => void (output += chunk.toString());
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      if (child.pid !== undefined) killTree(child.pid);
    }, limitMs);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      const ms = Date.now() - started;
      const text = plain(output);
      const logFile = join(logDir, `${file}.log`);
      mkdirSync(dirname(logFile), { recursive: true });
      writeFileSync(logFile, text);
      const total = Number(/Total:\s+(\d+)/.exec(text)?.[1] ?? 0);
      const passed = Number(/Passed:\s+(\d+)/.exec(text)?.[1] ?? 0);
      const failures = [...text.matchAll(/^\s*FAIL\s+(.*)\n\s*(.*)/gm)].map(([, name, reason]) => `${file} ${name}: ${reason}`);
      // A file that ended badly without counting its tests counts as one failure.
      const crashed = timedOut || total === 0 || code !== 0;
      const failed = crashed ? Math.max(1, total - passed) : total - passed;
      // Tests that did not pass with no FAIL line to say why: the file crashed, hung, or a hook
      // failed silently (uvu exits 0 then). Its last lines are the best account there is.
      if (timedOut || (failed > 0 && failures.length === 0)) {
        const tail = text.trimEnd().split('\n').slice(-TAIL_LINES).join('\n    ');
        const what = timedOut
          ? `ran past its limit of ${limitMs / 1000} s and was stopped`
          : crashed
            ? `ended (${signal ?? `exit code ${code}`}) before its tests were counted`
            : `did not run ${failed} of its ${total} tests`;
        failures.push(`${file} ${what}; its last lines (all of them in ${logFile}):\n    ${tail}`);
      }
      resolve({ file, passed, failed, ms, failures, output: text });
    });
  });
}

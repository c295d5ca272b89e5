// Runs one test file in a process of its own, so that one that crashes fails alone.
// Its output is kept whole and printed once the file ends (files run side by side would
// otherwise interleave), and written to a log. A file that runs past its time limit is killed
// with every process it started, and fails with its last lines. The network rules it added are
// removed once it has ended, however it ended.
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { removeFileRules, ruleTag } from './network-rules.ts';
import type { ChildCpu } from './child-cpu.ts';
import { killTree } from './process-tree.ts';
import { BUNDLE_EXEC_ARGV, bundled } from '../../bus/typescript-bundle.ts';

export interface FileOutcome {
  file: string;
  passed: number;
  failed: number;
  /** Tests the file marked to skip (uvu's `test.skip`, or left out by a `test.only`). */
  skipped: number;
  ms: number;
  /** CPU seconds of the file's process and every process it started and waited for. */
  cpuSeconds: number;
  /** What failed, a few lines each, for the summary at the end. */
  failures: string[];
  /** Everything the file printed, colours removed. */
  output: string;
}

export interface FileRun {
  projectRoot: string;
  /** Path under test/. */
  file: string;
  /** Its bundle, if made already (with the other files'); else it is bundled alone. */
  bundle?: string | undefined;
  env: NodeJS.ProcessEnv;
  limitMs: number;
  /** Where the file's whole output is written. */
  logDir: string;
  /** The runner's account of its children's CPU, read as the file's process exits. */
  childCpu: ChildCpu;
}

// Lines of a file's output that the summary repeats when no FAIL line says what went wrong.
const TAIL_LINES = 12;

const OUTPUT_GRACE_MS = 3000;

const plain = (text: string) => text.replace(/\x1b\[[0-9;]*m/g, '');

/** A count of uvu's closing summary: the last such line, as a test may print the like before it. */
const countOf = (label: string, text: string) => Number([...text.matchAll(new RegExp(`^\\s*${label}:\\s+(\\d+)`, 'gm'))].at(-1)?.[1] ?? 0);

export async function runFile({ projectRoot, file, bundle, env, limitMs, logDir, childCpu }: FileRun): Promise<FileOutcome> {
  const started = Date.now();
  let entry: string;
  try {
    entry = bundle ?? (await bundled(join(projectRoot, 'test', file)));
  } catch (error) {
    const reason = `${file} could not be bundled: ${(error as Error).message}`;
    return { file, passed: 0, failed: 1, skipped: 0, ms: Date.now() - started, cpuSeconds: 0, failures: [reason], output: reason };
  }
  const tag = ruleTag(process.pid, file);
  let output = '';
  return new Promise((resolve) => {
    // A test file runs its own tests (uvu's test.run() at its end), from its bundle.
    const child = spawn(process.execPath, [...BUNDLE_EXEC_ARGV, entry], {
      cwd: projectRoot,
      env: { ...env, TEST_RULE_TAG: tag },
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
    // 'close' comes once its output has been read to the end, which 'exit' may precede (a file
    // that ends with process.exit() right after its last line). A process it left behind could
    // hold its pipes open: a few seconds at most.
    const outputRead = new Promise((resolve) => child.once('close', resolve));
    child.once('exit', async (code, signal) => {
      clearTimeout(timer);
      const cpuSeconds = childCpu.sinceLast();
      const grace = new AbortController();
      await Promise.race([outputRead, sleep(OUTPUT_GRACE_MS, undefined, { signal: grace.signal }).catch(() => undefined)]);
      grace.abort();
      const leftRules = removeFileRules(tag);
      const ms = Date.now() - started;
      const text = plain(output) + (leftRules > 0 ? `\n(the runner removed ${leftRules} network rule(s) the file left behind)\n` : '');
      const logFile = join(logDir, `${file}.log`);
      mkdirSync(dirname(logFile), { recursive: true });
      writeFileSync(logFile, text);
      const total = countOf('Total', text);
      const passed = countOf('Passed', text);
      const skipped = countOf('Skipped', text);
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
      resolve({ file, passed, failed, skipped, ms, cpuSeconds, failures, output: text });
    });
  });
}

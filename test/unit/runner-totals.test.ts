// Skipped tests reach the run's totals: a file's skips are counted, and the closing line says
// "N passed, N failed" with ", N skipped" only when there are some.
import { join } from 'node:path';
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { readConfig } from '../../bus/config.ts';
import { reportRun } from '../../ops/testing/report.ts';
import { ChildCpu } from '../../ops/testing/child-cpu.ts';
import { runFile, type FileOutcome } from '../../ops/testing/run-file.ts';

const config = readConfig();

function closingLine(outcomes: FileOutcome[]): string {
  const lines: string[] = [];
  const log = console.log;
  console.log = (line: string) => void lines.push(line);
  try {
    reportRun(outcomes, 1000);
  } finally {
    console.log = log;
  }
  return lines.at(-1)!;
}

test("a file's skipped test is counted, and the closing line says so", async () => {
  const outcome = await runFile({
    projectRoot: config.projectRoot,
    file: 'support/runner-fixtures/one-skipped.ts',
    env: process.env,
    limitMs: 60_000,
    logDir: join(config.varDir, 'test', `runner-totals-${process.pid}`),
    childCpu: new ChildCpu(),
  });
  assert.equal([outcome.passed, outcome.failed, outcome.skipped], [1, 0, 1], outcome.output);
  // Its process, node running the file's bundle, costs some hundredths of a CPU second at least
  // (0.09 s on a quiet machine): counted, not zero.
  assert.ok(outcome.cpuSeconds >= 0.02 && outcome.cpuSeconds < 60, `the file's CPU counted: ${outcome.cpuSeconds} s`);
  assert.is(closingLine([outcome, { ...outcome, file: 'other', skipped: 0 }]), '2 passed, 0 failed, 1 skipped');
  assert.is(closingLine([{ ...outcome, skipped: 0 }]), '1 passed, 0 failed');
});

test.run();

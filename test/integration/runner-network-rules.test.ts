// The network rules a test file adds never outlive it: a file killed at its time limit runs no
// exit handler, and the runner removes its tagged rules once it has ended; a run killed before
// that leaves rules whose owner is gone, which the next run removes, sparing a live run's.
import { spawnSync, execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { readConfig } from '../../bus/config.ts';
import { freePort } from '../../ops/stack/ports.ts';
import { waitUntil } from '../../ops/stack/process.ts';
import { removeFileRules, removeOrphanRules, ruleTag, taggedRules } from '../../ops/testing/network-rules.ts';
import { ChildCpu } from '../../ops/testing/child-cpu.ts';
import { runFile } from '../../ops/testing/run-file.ts';

const config = readConfig();
const logDir = join(config.varDir, 'test', `runner-network-rules-${process.pid}`);

const rulesOn = (port: number) => taggedRules().filter((rule) => rule.spec.includes(`--dports ${port} `));
const addRule = (port: number, tag: string) =>
  execFileSync('iptables', ['-I', 'INPUT', '-i', 'lo', '-p', 'tcp', '-m', 'multiport', '--dports', String(port),
    '-m', 'comment', '--comment', tag, '-j', 'DROP']);

test('a file killed at its time limit leaves no rule behind', async () => {
  const port = await freePort();
  const file = 'support/runner-fixtures/cut-off-and-hang.ts';
  // Long enough for the file to start and add its rule on a busy machine.
  const limitMs = 8000;
  const run = runFile({ projectRoot: config.projectRoot, file, env: { ...process.env, CUT_OFF_PORT: String(port) }, limitMs, logDir, childCpu: new ChildCpu() });
  await waitUntil('the file to cut off its port', async () => rulesOn(port).length === 1, limitMs);
  assert.is(rulesOn(port)[0]!.tag, ruleTag(process.pid, file), 'tagged with the run and the file');
  const outcome = await run;
  assert.ok(outcome.failures.some((failure) => failure.includes('ran past its limit')), 'killed at its limit');
  assert.equal(rulesOn(port), [], 'its rule removed by the runner');
  assert.match(outcome.output, /the runner removed 1 network rule/);
});

test("a run's start removes the rules of runs that are gone, not those of runs still going", async () => {
  const [gonePort, livePort] = [await freePort(), await freePort()];
  const gone = spawnSync('true').pid;
  addRule(gonePort, ruleTag(gone, 'integration/killed.test.ts'));
  addRule(livePort, ruleTag(process.pid, 'integration/running.test.ts'));
  try {
    removeOrphanRules();
    assert.equal(rulesOn(gonePort), [], "the gone run's rule");
    assert.is(rulesOn(livePort).length, 1, "the live run's rule stays");
  } finally {
    removeFileRules(ruleTag(gone, 'integration/killed.test.ts'));
    removeFileRules(ruleTag(process.pid, 'integration/running.test.ts'));
  }
});

test.run();

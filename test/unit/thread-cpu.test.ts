// A thread's CPU time is its own: work on another thread of the process does not count in it.
// Each side works until the process has used BUSY_SECONDS of CPU, however busy the machine.
import { Worker } from 'node:worker_threads';
import { once } from 'node:events';
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { threadCpuSeconds } from '../../actors/models/thread-cpu.ts';

const BUSY_SECONDS = 0.3;

const processCpuSeconds = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
};

test('work on this thread counts in its CPU time', () => {
  const [process0, thread0] = [processCpuSeconds(), threadCpuSeconds()];
  while (processCpuSeconds() - process0 < BUSY_SECONDS);
  const [processUsed, threadUsed] = [processCpuSeconds() - process0, threadCpuSeconds() - thread0];
  // Clock ticks of 10 ms, and the runtime's own threads take a little beside.
  assert.ok(threadUsed >= 0.7 * processUsed, `this thread ${threadUsed} s of the process's ${processUsed} s`);
});

test('work on another thread does not', async () => {
  const worker = new Worker(
    `const { parentPort } = require('node:worker_threads');
     const cpu = () => { const { user, system } = process.cpuUsage(); return (user + system) / 1e6; };
     const start = cpu();
     while (cpu() - start < ${BUSY_SECONDS});
     parentPort.postMessage('done');`,
    { eval: true },
  );
  const [process0, thread0] = [processCpuSeconds(), threadCpuSeconds()];
  await once(worker, 'message');
  const [processUsed, threadUsed] = [processCpuSeconds() - process0, threadCpuSeconds() - thread0];
  await worker.terminate();
  assert.ok(processUsed >= BUSY_SECONDS, `the process used ${processUsed} s`);
  assert.ok(threadUsed < 0.3 * processUsed, `this thread ${threadUsed} s of the process's ${processUsed} s`);
});

test.run();

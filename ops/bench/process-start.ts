// What a service process costs to start: the CPU the storage service, the gateway and an actor
// host have each spent by the time they are ready, and how long the three take together,
// started as `npm start`, the cluster and every test file start them (ops/stack/service-process.ts).
// The first run also creates the schema; the others find it.
//   node --import tsx ops/bench/process-start.ts [runs=4]
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readConfig } from '../../bus/index.ts';
import { startServiceStack } from '../support/service-stack.ts';
import { startServices, type Services } from '../support/services.ts';

const runs = Number(process.argv[2] ?? 4);
const config = readConfig();

/** CPU seconds a process has spent, every thread of it included (/proc/<pid>/stat). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function report(run: number, services: Services, readyMs?: number): void {
  const cpu = [['storage', services.storage], ['gateway', services.gateway], ['actor host', services.hosts[0]!]] as const;
  const ready = readyMs === undefined ? 'with the servers' : `ready in ${(readyMs / 1000).toFixed(1)} s`;
  console.log(`run ${run} (${ready}): CPU until ready ${cpu.map(([name, service]) => `${name} ${cpuSeconds(service.pid).toFixed(2)} s`).join(', ')}`);
}

const stack = await startServiceStack({ name: 'bench-process-start', dir: join(config.varDir, 'bench', `process-start-${process.pid}`), database: 'emotions_process_start' });
try {
  report(1, stack.services);
  await stack.services.stop();
  for (let run = 2; run <= runs; run++) {
    const started = Date.now();
    const services = await startServices({ name: 'bench-process-start', env: stack.env });
    report(run, services, Date.now() - started);
    await services.stop();
  }
} finally {
  await stack.stop();
  stack.removeFiles();
}

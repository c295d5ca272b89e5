// Ports for servers started on the fly (ops/stack/ports.ts): test files run side by side, each
// starting servers whose ports were picked seconds earlier, so no two processes may be handed
// the same port, and none may come from the range the OS takes outgoing connections' ports from
// or be one fetch() refuses.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readConfig } from '../../bus/config.ts';
import { bundled } from '../../bus/typescript-bundle.ts';
import { portRange } from '../../ops/stack/ports.ts';

const config = readConfig();
const PER_PROCESS = 300;
const PROCESSES = 4;

// A claim lasts as long as its process: each one holds its ports until all have answered.
function portsFromOneProcess(portsModule: string): { ports: Promise<number[]>; release(): void } {
  const script = `import { freePort } from ${JSON.stringify(portsModule)};
    const ports = await Promise.all(Array.from({ length: ${PER_PROCESS} }, () => freePort()));
    console.log(JSON.stringify(ports));
    process.stdin.resume();`;
  const child = spawn(process.execPath, ['--input-type=module', '--eval', script], { cwd: config.projectRoot, stdio: ['pipe', 'pipe', 'inherit'] });
  const ports = new Promise<number[]>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      if (out.endsWith('\n')) resolve(JSON.parse(out));
    });
    child.once('exit', (code) => reject(new Error(`exited (${code}) before answering`)));
  });
  return { ports, release: () => child.stdin.end() };
}

test(`${PROCESSES} processes asking for ${PER_PROCESS} ports each at once are never handed the same one`, async () => {
  // From a bundle, as the service runs it: no loader to start in each process.
  const portsModule = await bundled(join(config.projectRoot, 'ops/stack/ports.ts'));
  const processes = Array.from({ length: PROCESSES }, () => portsFromOneProcess(portsModule));
  let all: number[];
  try {
    all = (await Promise.all(processes.map((p) => p.ports))).flat();
  } finally {
    for (const p of processes) p.release();
  }
  assert.is(all.length, PROCESSES * PER_PROCESS);
  assert.is(new Set(all).size, all.length, 'every port handed out once');
  const { low, high } = portRange();
  for (const port of all) assert.ok(port >= low && port <= high, `${port} in [${low}, ${high}]`);
  const [ephemeralStart] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
  assert.ok(high < ephemeralStart!, `[${low}, ${high}] lies below the OS's range for outgoing connections`);
  // 10080 is the highest of the Fetch standard's bad ports: fetch() refuses to connect to it.
  assert.ok(low > 10080, `[${low}, ${high}] holds no port fetch() refuses`);
});

test.run();

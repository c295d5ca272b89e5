// Taking over the claims of exited processes (ops/stack/ports.ts): several processes that find
// the same dead claimant at once must not both come away holding the port.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readConfig } from '../../bus/config.ts';
import { bundled } from '../../bus/typescript-bundle.ts';

const config = readConfig();
const PORTS = 400;
const PROCESSES = 4;

/**
 * A process that, once told to go, claims every port of `claims` in the same order, and says
 * which it holds. A claim lasts as long as its process: it holds them until released.
 */
function claimer(claims: string, portsModule: string): { ready: Promise<void>; go(): void; held: Promise<number[]>; release(): void } {
  const script = `import { claimPort } from ${JSON.stringify(portsModule)};
    console.log('ready');
    process.stdin.once('data', () => {
      const held = [];
      for (let port = 1; port <= ${PORTS}; port++) if (claimPort(${JSON.stringify(claims)}, port)) held.push(port);
      console.log(JSON.stringify(held));
      process.stdin.resume();
    });`;
  const child = spawn(process.execPath, ['--input-type=module', '--eval', script], { cwd: config.projectRoot, stdio: ['pipe', 'pipe', 'inherit'] });
  const lines: string[] = [];
  const waiting: Array<(line: string) => void> = [];
  let out = '';
  child.stdout.on('data', (chunk) => {
    out += chunk;
    for (let end = out.indexOf('\n'); end >= 0; end = out.indexOf('\n')) {
      const line = out.slice(0, end);
      out = out.slice(end + 1);
      const next = waiting.shift();
      if (next) next(line);
      else lines.push(line);
    }
  });
  const nextLine = () => new Promise<string>((resolve, reject) => {
    const line = lines.shift();
    if (line !== undefined) return resolve(line);
    waiting.push(resolve);
    child.once('exit', (code) => reject(new Error(`exited (${code})`)));
  });
  const ready = nextLine().then(() => undefined);
  return {
    ready,
    go: () => child.stdin.write('go\n'),
    held: ready.then(nextLine).then((line) => JSON.parse(line) as number[]),
    release: () => child.stdin.end(),
  };
}

test(`${PROCESSES} processes taking over the same ${PORTS} dead claims at once hold each port once`, async () => {
  const claims = mkdtempSync(join(tmpdir(), 'port-claims-'));
  try {
    // A process that has exited: every claim names it.
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout;
    for (let port = 1; port <= PORTS; port++) writeFileSync(join(claims, String(port)), dead);
    // From a bundle, as the service runs it: no loader to start in each process.
    const portsModule = await bundled(join(config.projectRoot, 'ops/stack/ports.ts'));
    const processes = Array.from({ length: PROCESSES }, () => claimer(claims, portsModule));
    let held: number[];
    try {
      await Promise.all(processes.map((each) => each.ready));
      for (const each of processes) each.go();
      held = (await Promise.all(processes.map((each) => each.held))).flat();
    } finally {
      for (const each of processes) each.release();
    }
    assert.is(new Set(held).size, held.length, 'no port held by two processes');
    assert.is(held.length, PORTS, 'every dead claim taken over by one process');
    assert.equal(readdirSync(claims).length, PORTS, 'nothing left beside the claims');
  } finally {
    rmSync(claims, { recursive: true, force: true });
  }
});

test.run();

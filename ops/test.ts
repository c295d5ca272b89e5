// The whole test suite: starts NATS and ClickHouse on free loopback ports with their data in a
// fresh folder, runs every test file (unit and integration) against them, stops what it
// started, and closes with the line "N passed, N failed".
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { readConfig } from '../bus/config.ts';
import { freePort } from './stack/ports.ts';
import { startClickHouse } from './stack/clickhouse.ts';
import { startNats } from './stack/nats.ts';

const config = readConfig();

const pattern = process.argv[2] ?? '\\.test\\.ts$';
// Per run, so that runs side by side never share a server or a data folder.
const dir = join(config.varDir, 'test', `stack-${process.pid}`);

const nats = await startNats({ dir: join(dir, 'nats'), port: await freePort(), maxFileStore: '2GB' });
const clickhouse = await startClickHouse({
  dir: join(dir, 'clickhouse'),
  httpPort: await freePort(),
  tcpPort: await freePort(),
}).catch(async (error) => {
  await nats.stop();
  throw error;
});

let code = 1;
let output = '';
try {
  code = await new Promise<number>((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'node_modules/uvu/bin.js', 'test', pattern], {
      cwd: config.projectRoot,
      env: {
        ...process.env,
        NATS_URL: nats.url,
        CLICKHOUSE_URL: clickhouse.url,
        CLICKHOUSE_DATABASE: 'emotions_test',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    child.stdout.on('data', (chunk: Buffer) => {
      process.stdout.write(chunk);
      output += chunk.toString();
    });
    child.once('exit', (exitCode) => resolve(exitCode ?? 1));
  });
} finally {
  await Promise.all([nats.stop(), clickhouse.stop()]);
}

const plain = output.replace(/\x1b\[[0-9;]*m/g, '');
const total = Number(/Total:\s+(\d+)/.exec(plain)?.[1] ?? 0);
const passed = Number(/Passed:\s+(\d+)/.exec(plain)?.[1] ?? 0);
const failed = total - passed;
const ok = code === 0 && failed === 0 && total > 0;
// The servers' data and logs are kept only when something failed.
if (ok) rmSync(dir, { recursive: true, force: true });
else console.log(`server data and logs: ${dir}; service logs: ${join(config.varDir, 'test', 'services')}`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(ok ? 0 : 1);

// The one launcher of the service's processes (ops/stack/service-process.ts), on a gateway (the
// quickest process to start): started means its /readyz answers 200, and by then it serves; one
// that exits first fails the start and names its log; one kept running that crashes is started
// again, one stopped from outside stays down.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { setImmediate as tick } from 'node:timers/promises';
import { readConfig } from '../../bus/config.ts';
import { freePort } from '../../ops/stack/ports.ts';
import { waitUntil } from '../../ops/stack/process.ts';
import { launchService, serviceProcess, type ServiceSpec } from '../../ops/stack/service-process.ts';
import { httpRequest } from '../../ops/stack/http-client.ts';

const config = readConfig();
const dir = join(config.varDir, 'test', 'service-process', String(process.pid));

async function gatewaySpec(id: string): Promise<ServiceSpec & { baseUrl: string }> {
  const port = await freePort();
  return {
    id,
    role: 'gateway',
    projectRoot: config.projectRoot,
    logFile: join(dir, `${id}.log`),
    env: { ...process.env, AUTH_JWT_SECRET: 'service-process-test', GATEWAY_PORT: String(port) },
    metricsPort: await freePort(),
    baseUrl: `http://127.0.0.1:${port}`,
  };
}

const status = async (url: string) => (await httpRequest(url)).status;

test.after(() => rmSync(dir, { recursive: true, force: true }));

test('a launched process is ready when its /readyz says so, and then serves', async () => {
  const spec = await gatewaySpec('launcher-ready');
  const gateway = await launchService(spec);
  try {
    assert.is(await status(`http://127.0.0.1:${spec.metricsPort}/readyz`), 200);
    assert.is(await status(`${spec.baseUrl}/v1/sessions`), 401, 'it answers the API at once');
  } finally {
    await gateway.stop();
  }
});

test('a process that exits before it is ready fails the launch, naming its log and quoting its end', async () => {
  // An id the configuration refuses: the process exits at once.
  const spec = await gatewaySpec('launcher-exits');
  const launching = launchService({ ...spec, id: 'not an id!' });
  await launching.then(
    () => assert.unreachable('the launch should fail'),
    (error: Error) => {
      assert.match(error.message, /^not an id! exited \(1\) before it was ready/);
      assert.ok(error.message.includes(`see ${spec.logFile}, which ends:\n`), error.message);
      assert.match(error.message.split('which ends:\n')[1] ?? '', /HOST_ID/, 'the reason, from its log');
    },
  );
});

test('a process kept running is started again after a crash, not after a stop from outside', async () => {
  const member = serviceProcess(await gatewaySpec('launcher-kept'));
  const reports: string[] = [];
  try {
    await member.start();
    member.keepRunning((message) => reports.push(message));
    const crashed = member.current()!;
    process.kill(-crashed.pid, 'SIGKILL');
    await waitUntil('the gateway started again', async () => member.current()!.pid !== crashed.pid, 60_000);
    assert.is(await status(`${member.metricsUrl}/readyz`), 200);
    assert.equal(reports, ['launcher-kept exited (SIGKILL); starting it again (restart 1)']);

    const stopped = member.current()!;
    process.kill(stopped.pid, 'SIGTERM');
    assert.is(await stopped.exited, 0);
    await tick();
    assert.is(reports.length, 1, `nothing restarted: ${reports.join('; ')}`);
  } finally {
    await member.stop();
  }
});

test.run();

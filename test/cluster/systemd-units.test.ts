// The systemd units of ops/production/systemd pass systemd's own check: known sections and
// keys, values that parse, and commands that exist on this machine.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readConfig } from '../../bus/config.ts';

const dir = join(readConfig().projectRoot, 'ops/production/systemd');
const units = readdirSync(dir).filter((file) => file.endsWith('.service'));

test('there is a unit for each process of the service, for NATS and for ZooKeeper', () => {
  assert.equal(units.sort(), ['emo-actor-host.service', 'emo-gateway.service', 'emo-storage.service', 'nats-server.service', 'zookeeper.service']);
});

for (const unit of units) {
  test(`${unit} passes systemd-analyze verify without a warning`, () => {
    const result = spawnSync('systemd-analyze', ['verify', join(dir, unit)], { encoding: 'utf8' });
    assert.is(result.status, 0, result.stderr);
    assert.is(result.stderr.trim(), '');
  });
}

test('a unit with a mistake is caught by the same check', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'units-'));
  try {
    const broken = join(scratch, 'emo-broken.service');
    writeFileSync(broken, readFileSync(join(dir, 'emo-gateway.service'), 'utf8').replace('Restart=always', 'Restart=sometimes'));
    const result = spawnSync('systemd-analyze', ['verify', broken], { encoding: 'utf8' });
    assert.match(result.stderr, /restart specifier/);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
});

test.run();

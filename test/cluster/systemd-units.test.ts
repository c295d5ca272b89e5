// The systemd units of ops/production/systemd, and its drop-in over Debian's ClickHouse unit,
// pass systemd's own check: known sections and keys, values that parse, and commands that
// exist on this machine.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

// Debian's unit as the package installs it, with the drop-in beside it where systemd looks.
function verifyClickHouseWith(dropIn: string): ReturnType<typeof spawnSync> {
  const scratch = mkdtempSync(join(tmpdir(), 'units-'));
  try {
    const unit = join(scratch, 'clickhouse-server.service');
    writeFileSync(unit, readFileSync('/lib/systemd/system/clickhouse-server.service', 'utf8'));
    mkdirSync(`${unit}.d`);
    writeFileSync(join(`${unit}.d`, 'restart.conf'), dropIn);
    return spawnSync('systemd-analyze', ['verify', unit], { encoding: 'utf8' });
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

test('the drop-in that restarts a crashed ClickHouse passes the check over Debian\'s unit, and a mistake in it does not', () => {
  const dropIn = readFileSync(join(dir, 'clickhouse-server.service.d', 'restart.conf'), 'utf8');
  assert.match(dropIn, /^Restart=on-failure$/m);
  const result = verifyClickHouseWith(dropIn);
  assert.is(result.status, 0, String(result.stderr));
  assert.is(String(result.stderr).trim(), '');
  assert.match(String(verifyClickHouseWith(dropIn.replace('Restart=on-failure', 'Restart=sometimes')).stderr), /restart.conf.*restart specifier/);
});

test.run();

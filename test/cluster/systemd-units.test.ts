// The systemd units of ops/production/systemd, and its drop-in over Debian's ClickHouse unit,
// pass systemd's own check: known sections and keys, values that parse, and commands that
// exist on this machine.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from '../../ops/support/uvu.ts';
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

/** Writes `files` (path in a scratch folder -> text) and verifies the first: systemd reads a
 *  unit's drop-ins from `<unit>.d/` beside it. */
function verifyWritten(files: Record<string, string>): { status: number | null; stderr: string } {
  const scratch = mkdtempSync(join(tmpdir(), 'units-'));
  try {
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(scratch, path)), { recursive: true });
      writeFileSync(join(scratch, path), text);
    }
    return spawnSync('systemd-analyze', ['verify', join(scratch, Object.keys(files)[0]!)], { encoding: 'utf8' });
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

test('a unit with a mistake is caught by the same check', () => {
  const gateway = readFileSync(join(dir, 'emo-gateway.service'), 'utf8');
  assert.match(verifyWritten({ 'emo-broken.service': gateway.replace('Restart=always', 'Restart=sometimes') }).stderr, /restart specifier/);
});

// Debian's unit as the package installs it, with the drop-in beside it.
const verifyClickHouseWith = (dropIn: string) =>
  verifyWritten({
    'clickhouse-server.service': readFileSync('/lib/systemd/system/clickhouse-server.service', 'utf8'),
    'clickhouse-server.service.d/restart.conf': dropIn,
  });

test('the drop-in that restarts a crashed ClickHouse passes the check over Debian\'s unit, and a mistake in it does not', () => {
  const dropIn = readFileSync(join(dir, 'clickhouse-server.service.d', 'restart.conf'), 'utf8');
  assert.match(dropIn, /^Restart=on-failure$/m);
  const result = verifyClickHouseWith(dropIn);
  assert.is(result.status, 0, result.stderr);
  assert.is(result.stderr.trim(), '');
  assert.match(verifyClickHouseWith(dropIn.replace('Restart=on-failure', 'Restart=sometimes')).stderr, /restart.conf.*restart specifier/);
});

test('the drop-in that hands ClickHouse its users\' passwords passes the same check beside the restart one', () => {
  const result = verifyWritten({
    'clickhouse-server.service': readFileSync('/lib/systemd/system/clickhouse-server.service', 'utf8'),
    'clickhouse-server.service.d/restart.conf': readFileSync(join(dir, 'clickhouse-server.service.d', 'restart.conf'), 'utf8'),
    'clickhouse-server.service.d/environment.conf': readFileSync(join(dir, 'clickhouse-server.service.d', 'environment.conf'), 'utf8'),
  });
  assert.is(result.status, 0, result.stderr);
  assert.is(result.stderr.trim(), '');
});

test.run();

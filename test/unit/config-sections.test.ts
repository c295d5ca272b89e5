// Each process kind reads the shared section and its own (bus/config.ts): a value only another
// kind reads never stops it, and the checks between two variables hold in the section that has both.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { readConfig, readGatewayConfig, readHostConfig, readStorageConfig } from '../../bus/config.ts';

test('readConfig() is every section: what each process kind reads, together', () => {
  const env = { GATEWAY_PORT: '8081', HOST_CAPACITY: '3', WRITER_BATCH_ROWS: '7', NATS_REPLICAS: '3' };
  assert.equal(readConfig(env), { ...readGatewayConfig(env), ...readHostConfig(env), ...readStorageConfig(env) });
  assert.is(readGatewayConfig(env).natsReplicas, 3);
  assert.not.ok('hostCapacity' in readGatewayConfig(env));
  assert.not.ok('gatewayPort' in readStorageConfig(env));
  assert.not.ok('writerBatchRows' in readHostConfig(env));
});

test("a bad value of another kind's section does not stop a process; one of its own does", () => {
  assert.not.throws(() => readGatewayConfig({ TAKEOVER_SECONDS: '1', WRITER_FLUSH_MS: '1' }));
  assert.throws(() => readHostConfig({ TAKEOVER_SECONDS: '1' }), /TAKEOVER_SECONDS/);
  assert.throws(() => readStorageConfig({ WRITER_FLUSH_MS: '1' }), /WRITER_FLUSH_MS/);
  assert.throws(() => readGatewayConfig({ NATS_REPLICAS: '0' }), /NATS_REPLICAS/);
});

test('a session record outlives the longest session plus an hour, in every kind that reads both', () => {
  const env = { SESSION_MAX_SECONDS: '86400', SESSION_RECORD_MAX_AGE_SECONDS: '86400' };
  for (const read of [readHostConfig, readStorageConfig]) assert.throws(() => read(env), /SESSION_RECORD_MAX_AGE_SECONDS must be a number >= 90000/);
  assert.is(readStorageConfig({ ...env, SESSION_RECORD_MAX_AGE_SECONDS: '90000' }).sessionRecordMaxAgeSeconds, 90000);
});

test.run();

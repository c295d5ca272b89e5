// A change of a session record given a timeout fails once it has passed without an answer, rather
// than waiting out the JetStream client's own (far longer here): an owner's heartbeat sent as its
// connection dropped is given up in time for the next one to renew the lease; and such a failure
// tells a host the bucket was not writable, as its status may not (actors/session/lease-clock.ts).
// A real NATS server, frozen (SIGSTOP) so that it holds the connection open and answers nothing.
import { join } from 'node:path';
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { jetstream } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { readConfig } from '../../bus/config.ts';
import { activeSessionRecord } from '../support/session-record.ts';
import { createLog } from '../../bus/log.ts';
import { SessionRecords } from '../../bus/session-records.ts';
import { freePort } from '../../ops/stack/ports.ts';
import { startNats } from '../../ops/stack/nats.ts';
import type { Service } from '../../ops/stack/process.ts';

const config = readConfig();
const CLIENT_TIMEOUT_MS = 60_000;
const WRITE_TIMEOUT_MS = 500;

let nats: Service;
let nc: NatsConnection;
let records: SessionRecords;

test.before(async () => {
  const port = await freePort();
  nats = await startNats({ dir: join(config.varDir, 'test', `session-records-deadline-${process.pid}`, 'nats'), port });
  nc = await connect({ servers: `nats://127.0.0.1:${port}` });
  records = await SessionRecords.open(jetstream(nc, { timeout: CLIENT_TIMEOUT_MS }), createLog({ logLevel: 'silent', hostId: 'deadline' }), 1);
});

test.after(async () => {
  if (nats) process.kill(nats.pid, 'SIGCONT');
  await nc?.close();
  await nats?.stop();
});

test('a change that gets no answer fails after its timeout, not the client\'s; the next one lands', async () => {
  const record = activeSessionRecord('deadline', 'deadline');
  await records.create(record);
  const beat = (at: number) => records.update(record.id, (current) => ({ ...current, healthCheckAt: at }), { timeoutMs: WRITE_TIMEOUT_MS });

  process.kill(nats.pid, 'SIGSTOP');
  const startedAt = Date.now();
  let failed: unknown;
  try {
    failed = await beat(startedAt).then(() => undefined, (error: unknown) => error);
  } finally {
    process.kill(nats.pid, 'SIGCONT');
  }
  const waitedMs = Date.now() - startedAt;
  assert.instance(failed, Error, 'the change fails while the server is frozen');
  assert.match((failed as Error).message, /timeout/);
  assert.ok(waitedMs < CLIENT_TIMEOUT_MS / 4, `given up after ${waitedMs} ms, not after the client's ${CLIENT_TIMEOUT_MS} ms`);

  const renewed = Date.now();
  const written = await beat(renewed);
  assert.is(written?.record.healthCheckAt, renewed);
  assert.is((await records.fresh(record.id))?.record.healthCheckAt, renewed);
});

test('a change that failed for the bucket makes the next look at its writability fail, though the stream answers', async () => {
  const record = activeSessionRecord('deadline', 'writability');
  await records.create(record);
  // The test before left a failed change to report: reported here, and then nothing.
  await records.writable().catch(() => {});
  await records.writable();

  process.kill(nats.pid, 'SIGSTOP');
  let failed: unknown;
  try {
    failed = await records.update(record.id, (current) => ({ ...current, healthCheckAt: Date.now() }), { timeoutMs: WRITE_TIMEOUT_MS })
      .then(() => undefined, (error: unknown) => error);
  } finally {
    process.kill(nats.pid, 'SIGCONT');
  }
  assert.instance(failed, Error, 'the change fails while the server is frozen');
  // The stream answers for its status again (the message says why it fails); the failed change
  // counts against it once.
  const first = await records.writable().then(() => undefined, (error: unknown) => error);
  assert.instance(first, Error, 'not writable as far as this process can tell: its change failed');
  assert.match((first as Error).message, /a change of a session record failed/);
  await records.writable();
  assert.ok(await records.update(record.id, (current) => ({ ...current, healthCheckAt: Date.now() })), 'and it takes changes');
  await records.writable();
});

test.run();

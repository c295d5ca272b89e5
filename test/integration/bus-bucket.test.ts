// A process opening its KV buckets while JetStream does not answer (a server restarting, a
// cluster electing a stream's leader) waits for it within its patience instead of failing at
// once; what is not about reaching JetStream fails at once. A real NATS server, stopped and
// started again on the same port and store.
import { join } from 'node:path';
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream } from '@nats-io/jetstream';
import { openBucket } from '../../bus/bucket.ts';
import { readConfig } from '../../bus/config.ts';
import { startNats, type NatsOptions } from '../../ops/stack/nats.ts';
import type { Service } from '../../ops/stack/process.ts';
import { freePort } from '../../ops/stack/ports.ts';

const config = readConfig();
/** Each JetStream request gives up after this: the outage below outlasts several of them. */
const REQUEST_TIMEOUT_MS = 1000;
const OUTAGE_MS = 3500;

let options: NatsOptions;
let nats: Service | undefined;
let nc: NatsConnection;

test.before(async () => {
  options = { dir: join(config.varDir, 'test', `bus-bucket-${process.pid}`, 'nats'), port: await freePort() };
  nats = await startNats(options);
  nc = await connect({ servers: `nats://127.0.0.1:${options.port}`, maxReconnectAttempts: -1, reconnectTimeWait: 200 });
});

test.after(async () => {
  await nc?.close();
  await nats?.stop();
});

test('a bucket opened while NATS is down is opened once it is back, and works', async () => {
  const js = jetstream(nc, { timeout: REQUEST_TIMEOUT_MS });
  await nats!.stop();
  const startedAt = Date.now();
  const opening = openBucket(js, 'patience', { replicas: 1 });
  await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
  nats = await startNats(options);
  const kv = await opening;
  assert.ok(Date.now() - startedAt >= OUTAGE_MS, 'it did wait for the server');
  await kv.put('key', 'value');
  assert.is((await kv.get('key'))?.string(), 'value');
});

test('past its patience the last error is thrown', async () => {
  const js = jetstream(nc, { timeout: REQUEST_TIMEOUT_MS });
  await nats!.stop();
  try {
    const error = await openBucket(js, 'impatient', { replicas: 1, patienceMs: 1500 }).then(
      () => undefined,
      (reason: unknown) => reason as Error,
    );
    assert.ok(error, 'opening fails while the server is down');
    assert.match(error!.name, /TimeoutError|RequestError/);
  } finally {
    nats = await startNats(options);
  }
});

test('an error that is not about reaching JetStream fails at once', async () => {
  const js = jetstream(nc, { timeout: REQUEST_TIMEOUT_MS });
  const startedAt = Date.now();
  const error = await openBucket(js, 'not a valid name', { replicas: 1 }).then(
    () => undefined,
    (reason: unknown) => reason as Error,
  );
  assert.ok(error, 'a name with spaces is refused');
  assert.ok(Date.now() - startedAt < 5000, 'without waiting out the patience of 60 s');
});

test.run();

// The runner's lanes (ops/test.ts, ops/testing/fresh-lane.ts): a file finds its lane's NATS with
// no stream the files before it left, and deleting a lane's streams takes the key-value buckets
// with them, after which a stack makes its own again and answers lists at once (a purge, which
// keeps the streams' sequence numbers, left lists answering 503).
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { startServices } from '../../ops/support/services.ts';
import { deleteStreams } from '../../ops/testing/fresh-lane.ts';

const natsUrl = process.env.NATS_URL!;
let nc: NatsConnection;
let jsm: JetStreamManager;

async function streamNames(): Promise<string[]> {
  const names: string[] = [];
  for await (const stream of jsm.streams.list()) names.push(stream.config.name);
  return names;
}

test.before(async () => {
  nc = await connect({ servers: natsUrl });
  jsm = await jetstreamManager(nc);
});

test.after(async () => {
  await nc?.close();
});

test('this file finds no stream that a file before it on the lane left', async () => {
  assert.equal(await streamNames(), []);
});

test('deleting the streams takes buckets too; a stack started after it makes its own and lists at once', async () => {
  await new Kvm(nc).create('fresh-lane-check');
  await jsm.streams.add({ name: 'FRESH_LANE_CHECK', subjects: ['fresh-lane-check.>'] });
  const services = await startServices({ name: 'runner-fresh-lane' });
  try {
    const created = await services.api('POST', '/v1/sessions', { body: { name: 'before', streamUri: 'rtmp://127.0.0.1:9/live/x' } });
    assert.is(created.status, 201, JSON.stringify(created.body));
  } finally {
    await services.stop();
  }
  assert.ok((await streamNames()).length > 2, 'the stack made its streams and buckets');

  await deleteStreams(natsUrl);
  assert.equal(await streamNames(), []);

  const again = await startServices({ name: 'runner-fresh-lane-again' });
  try {
    const page = await again.api('GET', '/v1/sessions');
    assert.is(page.status, 200, JSON.stringify(page.body));
    assert.equal(page.body.data, []);
  } finally {
    await again.stop();
  }
});

test.run();

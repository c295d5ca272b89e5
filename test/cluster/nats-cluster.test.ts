// Three NATS servers in one JetStream cluster: the streams and buckets the service makes keep
// three replicas, survive the loss of any one server (even the leader of each), and the lost
// server catches up when it comes back. The production NATS config passes the server's own check.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { openBucket } from '../../bus/bucket.ts';
import { readConfig } from '../../bus/config.ts';
import { streams } from '../../bus/subjects.ts';
import { ensureDeadLetterStream } from '../../storage/writer/dead-letter.ts';
import { ensureRowsStream } from '../../storage/writer/rows-stream.ts';
import { startNatsCluster, type NatsCluster } from '../../ops/stack/nats-cluster.ts';
import { waitUntil } from '../../ops/stack/process.ts';

const config = readConfig();
let cluster: NatsCluster;
let nc: NatsConnection;
let jsm: JetStreamManager;

test.before(async () => {
  cluster = await startNatsCluster({ dir: join(config.varDir, 'test', `nats-cluster-${process.pid}`), maxFileStore: '512MB' });
  nc = await connect({ servers: cluster.url.split(','), maxReconnectAttempts: -1, reconnectTimeWait: 200 });
  jsm = await jetstreamManager(nc);
});

test.after(async () => {
  await nc?.close();
  await cluster?.stop();
});

/** Whether every replica of the stream is known to the leader and caught up with it. */
async function allCurrent(stream: string): Promise<boolean> {
  const info = await jsm.streams.info(stream);
  const replicas = info.cluster?.replicas ?? [];
  return Boolean(info.cluster?.leader) && replicas.length === 2 && replicas.every((replica) => replica.current && !replica.offline);
}

test('the rows stream, the dead-letter stream and the buckets are made with three replicas', async () => {
  await ensureRowsStream(jsm, { maxBytes: 64 * 1024 ** 2, replicas: 3 });
  await ensureDeadLetterStream(jsm, 3);
  const kv = await openBucket(jetstream(nc), 'cluster-test', { replicas: 3 });
  for (const name of [streams.rows, streams.deadRows, 'KV_cluster-test']) {
    const info = await jsm.streams.info(name);
    assert.is(info.config.num_replicas, 3, name);
    await waitUntil(`${name} replicas current`, () => allCurrent(name), 15_000);
  }
  assert.is((await kv.status()).replicas, 3);
});

test('a bucket made with one replica is raised to the configured count', async () => {
  await openBucket(jetstream(nc), 'cluster-raised', { replicas: 1 });
  await openBucket(jetstream(nc), 'cluster-raised', { replicas: 3 });
  assert.is((await jsm.streams.info('KV_cluster-raised')).config.num_replicas, 3);
});

test('kill -9 of the leader of the bucket: writes go on, and the server catches up when back', async () => {
  const kv = await openBucket(jetstream(nc), 'cluster-test', { replicas: 3 });
  await kv.put('before', 'kept');
  const leader = (await jsm.streams.info('KV_cluster-test')).cluster?.leader;
  const node = cluster.nodes.find((candidate) => candidate.name === leader);
  assert.ok(node, `the leader ${leader} is one of ours`);
  await node!.kill();
  const killedAt = Date.now();
  // A new leader is elected among the two left; until then a write may time out.
  await waitUntil('a write after the leader is lost', async () => (await kv.put('after', 'written')) > 0, 20_000);
  const failoverMs = Date.now() - killedAt;
  assert.is((await kv.get('before'))?.string(), 'kept');
  assert.is((await kv.get('after'))?.string(), 'written');
  await node!.start();
  await waitUntil('the restarted server to catch up', () => allCurrent('KV_cluster-test'), 30_000);
  console.log(`  bucket writes answered again ${failoverMs} ms after its leader was killed`);
});

test('the production NATS config passes nats-server -t', () => {
  // One password per user of the configuration: each kind of process, the operator, analytics, the system account.
  const secrets = {
    NATS_SERVER_NAME: 'nats-1', NATS_ROUTE_PASSWORD: 'r', NATS_GATEWAY_PASSWORD: 'g', NATS_HOST_PASSWORD: 'h', NATS_STORAGE_PASSWORD: 's',
    NATS_ADMIN_PASSWORD: 'o', NATS_ANALYTICS_PASSWORD: 'a', NATS_SYSTEM_PASSWORD: 'y',
  };
  const routes = Object.fromEntries([1, 2, 3].map((i) => [`NATS_ROUTE_${i}`, `nats-route://route:r@nats-${i}.internal:6222`]));
  const file = join(config.projectRoot, 'ops/production/nats-analytics.conf');
  const check = (env: NodeJS.ProcessEnv) => spawnSync('nats-server', ['-t', '-c', file], { env: { ...process.env, ...env }, encoding: 'utf8' });
  const valid = check({ ...secrets, ...routes });
  assert.is(valid.status, 0, valid.stderr);
  assert.match(valid.stderr, /is valid/);
  // A missing secret is caught by the same check, not at the first connection.
  const missing = check(secrets);
  assert.is.not(missing.status, 0);
  assert.match(missing.stderr, /NATS_ROUTE_1/);
});

test.run();

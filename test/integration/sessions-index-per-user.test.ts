// A list from ClickHouse and a DELETE wait for the caller's own changes, not for the shared
// session index consumer to be idle: with two storage services sharing that consumer and
// alice renaming a session as fast as the bucket takes it (the consumer never idle), bob's
// first list and a deep page answer, each with bob's change just made, and bob's DELETE
// answers. The purge round that removes bob's session waits for the index, and still comes.
import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from '../support/uvu.ts';
import * as assert from 'uvu/assert';
import { readConfig } from '../../bus/config.ts';
import { connectBus } from '../../bus/connection.ts';
import type { SessionRecord } from '../../bus/contracts/session.ts';
import { newSessionId } from '../../bus/ids.ts';
import { createLog } from '../../bus/log.ts';
import { SessionRecords } from '../../bus/session-records.ts';
import { buckets, consumers } from '../../bus/subjects.ts';
import { connectClickHouse, clickHouseServer, queryRows, type ClickHouseClient } from '../../storage/clickhouse.ts';
import { SESSIONS_STREAM } from '../../storage/index-progress.ts';
import { sql } from '../../storage/sql.ts';
import { freePort } from '../../ops/stack/ports.ts';
import { waitUntil, type Service } from '../../ops/stack/process.ts';
import { launchService } from '../../ops/stack/service-process.ts';
import { startServices, type Services } from '../../ops/support/services.ts';

const config = readConfig();
const log = createLog({ logLevel: 'silent', hostId: 'sessions-index-per-user' });

const HOUR = 3_600_000;
const STREAM = 'rtmp://127.0.0.1:9/live/index-per-user';
// Bob's sessions, and what memory keeps of each user: a page past it is ClickHouse's.
const BOBS = 30;
const KEPT = '5';

let services: Services;
let second: Service;
let nc: NatsConnection;
let jsm: JetStreamManager;
let records: SessionRecords;
let clickhouse: ClickHouseClient;

test.before(async () => {
  const env = { SESSION_LIST_MEMORY_PER_USER: KEPT, PURGE_WINDOW_SECONDS: '1' };
  services = await startServices({ name: 'sessions-index-per-user', env });
  // A second storage service that writes: its follower shares the index consumer.
  const port = await freePort();
  second = await launchService({
    id: 'sessions-index-per-user-storage-2',
    role: 'storage',
    projectRoot: config.projectRoot,
    logFile: join(services.logDir, 'storage-2.log'),
    env: { ...process.env, ...env, LOG_LEVEL: 'info' },
    metricsPort: port,
  });
  nc = await connectBus('sessions-index-per-user', config.natsUrl, log);
  jsm = await jetstreamManager(nc);
  records = await SessionRecords.open(jetstream(nc), log, 1);
  clickhouse = connectClickHouse(clickHouseServer(config), config.clickhouseDatabase);
});

test.after(async () => {
  records?.close();
  await clickhouse?.close();
  await nc?.close();
  await second?.stop();
  await services?.stop();
});

/** A finished session as a host leaves it, created `hoursAgo`. */
function finished(user: string, name: string, hoursAgo: number): SessionRecord {
  const createdAt = Date.now() - hoursAgo * HOUR;
  return {
    id: newSessionId(createdAt),
    name,
    type: 'live_analysis',
    state: 'finished',
    createdAt,
    finishedAt: createdAt + 60_000,
    stopReason: 'client',
    user,
    product: 'tests',
    streamUri: STREAM,
    sensors: [],
    expiresAt: createdAt + 12 * HOUR,
    healthCheckAt: createdAt + 60_000,
    workerState: 'stopped',
    mediaSeconds: 0,
  };
}

const idle = async () => {
  const info = await jsm.consumers.info(SESSIONS_STREAM, consumers.sessionIndex);
  return info.num_pending === 0 && info.num_ack_pending === 0;
};

/**
 * Alice's session renamed as fast as the bucket takes it, until stopped; meanwhile the index
 * consumer is sampled, and `seenIdle` says whether it was ever idle.
 */
async function flood(record: SessionRecord): Promise<{ stop: () => Promise<{ renames: number; seenIdle: boolean }> }> {
  const kv = await new Kvm(nc).open(buckets.sessions);
  let running = true;
  let renames = 0;
  let seenIdle = false;
  const writing = (async () => {
    while (running) await kv.put(record.id, JSON.stringify({ ...record, name: `flood ${++renames}` }));
  })();
  await waitUntil('the index consumer busy with the flood', async () => !(await idle()), 10_000);
  const sampling = (async () => {
    while (running) {
      if (await idle()) seenIdle = true;
      await sleep(10);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await Promise.all([writing, sampling]);
      return { renames, seenIdle };
    },
  };
}

async function indexRows(id: string): Promise<number> {
  const [row] = await queryRows<{ n: number }>(clickhouse, sql`SELECT count() AS n FROM sessions WHERE id = ${id}`);
  return Number(row?.n ?? 0);
}

test('bob\'s first list, deep page and DELETE answer, with his changes, while alice\'s renames keep the index consumer busy', async () => {
  const { alice, bob } = services.users;
  const bobs: SessionRecord[] = [];
  for (let i = 0; i < BOBS; i++) {
    const record = finished(bob.user, `bob ${i}`, i + 1);
    await records.create(record);
    bobs.push(record);
  }
  const alices = finished(alice.user, 'flood 0', 1);
  await records.create(alices);
  await waitUntil('bob\'s sessions in the index', async () => await idle() && (await indexRows(bobs.at(-1)!.id)) > 0, 30_000);

  const renaming = await flood(alices);
  // Newest first: bob's newest session heads his first list, his 23rd newest is on the page at 20.
  const list = (query: string) => services.api('GET', `/v1/sessions${query}`, { token: bob.token });
  const rename = (record: SessionRecord, name: string) => services.api('PATCH', `/v1/sessions/${record.id}`, { body: { name }, token: bob.token });

  assert.is((await rename(bobs[0]!, 'bob newest renamed')).status, 200);
  const first = await list('?limit=10');
  assert.is(first.status, 200, JSON.stringify(first.body));
  assert.is(first.body.data[0].name, 'bob newest renamed', 'the first list shows bob\'s change');

  assert.is((await rename(bobs[22]!, 'bob deep renamed')).status, 200);
  const deep = await list('?offset=20&limit=5');
  assert.is(deep.status, 200, JSON.stringify(deep.body));
  assert.equal(deep.body.data.map((s: { name: string }) => s.name), ['bob 20', 'bob 21', 'bob deep renamed', 'bob 23', 'bob 24']);

  const deleted = bobs[25]!;
  const deletion = await services.api('DELETE', `/v1/sessions/${deleted.id}`, { token: bob.token });
  assert.is(deletion.status, 204, JSON.stringify(deletion.body));
  const after = await list('?offset=20&limit=10');
  assert.is(after.status, 200, JSON.stringify(after.body));
  assert.not.ok(after.body.data.some((s: { _id: string }) => s._id === deleted.id), 'the deleted session is not listed');

  const { renames, seenIdle } = await renaming.stop();
  console.log(`  alice renamed her session ${renames} times meanwhile`);
  assert.not.ok(seenIdle, 'the index consumer was never idle: a list waiting for it would have waited to its deadline');

  // Its round waits for the index to hold the session's last change, then removes its rows.
  await waitUntil('bob\'s deleted session purged from the index', async () => (await indexRows(deleted.id)) === 0, 30_000);
  assert.ok((await indexRows(bobs[24]!.id)) > 0, 'the others stay');
});

test.run();

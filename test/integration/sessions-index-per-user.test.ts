// A list from ClickHouse and a DELETE wait for the caller's own changes, not for the shared
// session index consumer to be idle. Two storage services share that consumer; alice renames a
// session as fast as the bucket takes it, and one of her changes is held unacknowledged, as by a
// service stuck on its insert, so the consumer is never idle: a list waiting for that (as lists
// once did) answers 503 at its deadline. Bob's first list and a deep page answer, each with his
// change just made, and his DELETE answers. His purge round waits until the index holds every
// change up to his session's last (the held one too), then comes. And with the consumer gone,
// a list stores its user's change itself: bob's deep page shows his rename all the same.
import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { readConfig } from '../../bus/config.ts';
import { connectBus } from '../../bus/connection.ts';
import type { SessionRecord } from '../../bus/contracts/session.ts';
import { newSessionId } from '../../bus/ids.ts';
import { createLog } from '../../bus/log.ts';
import { SessionRecords } from '../../bus/session-records.ts';
import { buckets, consumers } from '../../bus/subjects.ts';
import { connectClickHouse, clickHouseServer, queryRows, type ClickHouseClient } from '../../storage/clickhouse/clickhouse.ts';
import { SESSIONS_STREAM } from '../../storage/sessions/index-progress.ts';
import { sql } from '../../storage/clickhouse/sql.ts';
import { freePort } from '../../ops/stack/ports.ts';
import { waitUntil, type Service } from '../../ops/stack/process.ts';
import { launchService } from '../../ops/stack/service-process.ts';
import { startServices, type Services } from '../../ops/support/services.ts';
import { httpRequest } from '../../ops/stack/http-client.ts';

const config = readConfig();
const log = createLog({ logLevel: 'silent', hostId: 'sessions-index-per-user' });

const HOUR = 3_600_000;
const STREAM = 'rtmp://127.0.0.1:9/live/index-per-user';
// Bob's sessions, and what memory keeps of each user: a page past it is ClickHouse's.
const BOBS = 30;
const KEPT = '5';
// Alice's sessions, each renamed by a writer of its own, which pauses this long between renames.
const WRITERS = 32;
const PAUSE_MS = 10;

let services: Services;
let second: Service;
let secondMetrics: string;
let nc: NatsConnection;
let jsm: JetStreamManager;
let records: SessionRecords;
let clickhouse: ClickHouseClient;
/** Bob's sessions, newest first. */
const bobs: SessionRecord[] = [];

test.before(async () => {
  const env = { SESSION_LIST_MEMORY_PER_USER: KEPT, PURGE_WINDOW_SECONDS: '1' };
  services = await startServices({ name: 'sessions-index-per-user', env });
  // A second storage service that writes: its follower shares the index consumer.
  const port = await freePort();
  secondMetrics = `http://127.0.0.1:${port}`;
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
 * Alice's sessions renamed, each by a writer of its own, as fast as the bucket takes them,
 * until stopped; `spare` stops one's writer (its last rename landed), `resume` starts it again.
 */
function flood(sessions: SessionRecord[], kv: KV) {
  let running = true;
  let renames = 0;
  const writers = new Map<string, Promise<void>>();
  const spared = new Set<string>();
  const write = async (record: SessionRecord) => {
    while (running && !spared.has(record.id)) {
      await kv.put(record.id, JSON.stringify({ ...record, name: `flood ${++renames}` }));
      await sleep(PAUSE_MS);
    }
  };
  const start = (record: SessionRecord) => writers.set(record.id, write(record));
  sessions.forEach(start);
  return {
    spare: async (id: string) => {
      spared.add(id);
      await writers.get(id);
    },
    resume: (id: string) => {
      spared.delete(id);
      start(sessions.find((record) => record.id === id)!);
    },
    stop: async () => {
      running = false;
      await Promise.all(writers.values());
      return renames;
    },
  };
}

/**
 * One of alice's renames taken from the index consumer and kept unacknowledged, as a storage
 * service whose insert keeps failing keeps its batch: until let go, the consumer is never idle
 * and its acknowledgement floor stays below it. Its session's writer is spared meanwhile, since
 * a change replaced in the bucket leaves the stream and the consumer forgets it. Let go, it
 * goes to a follower again.
 */
async function holdOne(renaming: ReturnType<typeof flood>, ids: string[]): Promise<{ release: () => void }> {
  const consumer = await jetstream(nc).consumers.get(SESSIONS_STREAM, consumers.sessionIndex);
  for (;;) {
    const message = await consumer.next({ expires: 5000 });
    if (!message) continue;
    const id = message.subject.slice(message.subject.lastIndexOf('.') + 1);
    if (ids.includes(id)) {
      await renaming.spare(id);
      const last = await jsm.streams.getMessage(SESSIONS_STREAM, { last_by_subj: message.subject });
      if (last?.seq === message.seq) {
        const alive = setInterval(() => message.working(), 1000);
        return {
          release: () => {
            clearInterval(alive);
            message.nak();
          },
        };
      }
      renaming.resume(id);
    }
    message.nak();
  }
}

/**
 * A request as a client makes it: a 503 is retried as the answer asks, twice at most, each
 * printed with its reason. A list that waits for the consumer to be idle, or for every user's
 * changes, answers 503 every time while alice's change is held: retries do not hide it. One
 * that waits for bob's changes alone may still meet its deadline once on a loaded machine,
 * where an insert into the index takes seconds.
 */
async function asClient(what: string, request: () => Promise<{ status: number; body: any }>) {
  for (let retries = 0; ; retries++) {
    const reply = await request();
    if (reply.status !== 503 || retries === 2) return reply;
    console.log(`  bob's ${what}: 503, ${reply.body?.message}; retried`);
    await sleep(1000);
  }
}

async function indexRows(id: string): Promise<number> {
  const [row] = await queryRows<{ n: number }>(clickhouse, sql`SELECT count() AS n FROM sessions WHERE id = ${id}`);
  return Number(row?.n ?? 0);
}

test('bob\'s first list, deep page and DELETE answer, with his changes, while alice\'s renames keep the index consumer busy', async () => {
  const { alice, bob } = services.users;
  for (let i = 0; i < BOBS; i++) {
    const record = finished(bob.user, `bob ${i}`, i + 1);
    await records.create(record);
    bobs.push(record);
  }
  const alices = Array.from({ length: WRITERS }, (_, i) => finished(alice.user, `alice ${i}`, 1));
  for (const record of alices) await records.create(record);
  await waitUntil('bob\'s sessions in the index', async () => await idle() && (await indexRows(bobs.at(-1)!.id)) > 0, 30_000);

  const renaming = flood(alices, await new Kvm(nc).open(buckets.sessions));
  const held = await holdOne(renaming, alices.map(({ id }) => id));
  const began = Date.now();
  const deleted = bobs[25]!;
  try {
    // Newest first: bob's newest session heads his first list, his 23rd newest is on the page at 20.
    const list = (query: string) => asClient(`GET ${query}`, () => services.api('GET', `/v1/sessions${query}`, { token: bob.token }));
    const rename = (record: SessionRecord, name: string) => services.api('PATCH', `/v1/sessions/${record.id}`, { body: { name }, token: bob.token });
    // Each answer is asked before any is checked, so that a failure shows all of them.
    const renamed = [(await rename(bobs[0]!, 'bob newest renamed')).status];
    const first = await list('?limit=10');
    renamed.push((await rename(bobs[22]!, 'bob deep renamed')).status);
    const deep = await list('?offset=20&limit=5');
    const deletion = await asClient('DELETE', () => services.api('DELETE', `/v1/sessions/${deleted.id}`, { token: bob.token }));
    const after = await list('?offset=20&limit=10');
    assert.equal(renamed, [200, 200]);
    assert.equal(
      [first.status, deep.status, deletion.status, after.status],
      [200, 200, 204, 200],
      `first list, deep page, DELETE, list after it: ${JSON.stringify([first, deep, deletion, after].map(({ status, body }) => (status === 503 ? body : status)))}`,
    );
    assert.is(first.body.data[0].name, 'bob newest renamed', 'the first list shows bob\'s change');
    assert.equal(deep.body.data.map((s: { name: string }) => s.name), ['bob 20', 'bob 21', 'bob deep renamed', 'bob 23', 'bob 24']);
    assert.not.ok(after.body.data.some((s: { _id: string }) => s._id === deleted.id), 'the deleted session is not listed');
    console.log(`  alice renamed her sessions ${await renaming.stop()} times in the ${Date.now() - began} ms of bob's requests`);

    // Purge rounds come every second; none may take bob's session while a change before his
    // last is unacknowledged: for all a round knows it is his, and stored after the purge, its
    // row would stay.
    await sleep(3000);
    assert.ok((await indexRows(deleted.id)) > 0, 'bob\'s session waits for the index');
  } finally {
    held.release();
    await renaming.stop();
  }

  // Its round waits for the index to hold the session's last change, then removes its rows.
  await waitUntil('bob\'s deleted session purged from the index', async () => (await indexRows(deleted.id)) === 0, 30_000);
  assert.ok((await indexRows(bobs[24]!.id)) > 0, 'the others stay');
});

/** Index rows the lists of both storage services stored for their users' own changes. */
async function rowsStoredByLists(): Promise<number> {
  let rows = 0;
  for (const url of [services.metrics.storage, secondMetrics]) {
    const text = await (await httpRequest(`${url}/metrics`)).text;
    rows += Number(/^emo_session_index_rows_by_lists_total (\S+)$/m.exec(text)?.[1] ?? 0);
  }
  return rows;
}

test('with the index consumer gone, bob\'s deep page still shows his rename: his list stores his change itself', async () => {
  const { bob } = services.users;
  const before = await rowsStoredByLists();
  // No follower stores a change from here on: only a list that stores its own can show one.
  await jsm.consumers.delete(SESSIONS_STREAM, consumers.sessionIndex);
  const { status } = await services.api('PATCH', `/v1/sessions/${bobs[21]!.id}`, { body: { name: 'bob renamed, no consumer' }, token: bob.token });
  assert.is(status, 200);
  const deep = await services.api('GET', '/v1/sessions?offset=20&limit=5', { token: bob.token });
  assert.is(deep.status, 200, JSON.stringify(deep.body));
  assert.ok(deep.body.data.some((s: { name: string }) => s.name === 'bob renamed, no consumer'), `the rename shows: ${JSON.stringify(deep.body.data.map((s: { name: string }) => s.name))}`);
  assert.ok((await rowsStoredByLists()) > before, 'a list stored the row');
});

test.run();

// The newest pages of a session list come from memory (storage/sessions/newest-sessions.ts) exactly as
// ClickHouse would answer them, and a create, rename or stop shows in the creator's next list
// whichever of two storage services answers it: one from memory, the other (which keeps none,
// and does not write) from ClickHouse once the index has caught up. Memory behind the bucket
// (its watch held back) leaves the list to ClickHouse until it has caught up, and memory
// bounded in total forgets the users listed least lately.
import fc from 'fast-check';
import { Registry } from 'prom-client';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { join } from 'node:path';
import { seededRandom } from '../../ops/support/seeded-random.ts';
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { readConfig } from '../../bus/config.ts';
import { connectBus } from '../../bus/connection.ts';
import type { SessionRecord } from '../../bus/contracts/session.ts';
import { newSessionId } from '../../bus/ids.ts';
import { createLog } from '../../bus/log.ts';
import { SessionRecords, type WatchFollower } from '../../bus/session-records.ts';
import { connectClickHouse, clickHouseServer, type ClickHouseClient } from '../../storage/clickhouse/clickhouse.ts';
import { IndexProgress } from '../../storage/sessions/index-progress.ts';
import { StorageMetrics } from '../../storage/metrics.ts';
import { NewestSessions } from '../../storage/sessions/newest-sessions.ts';
import { SessionLists } from '../../storage/sessions/session-lists.ts';
import { UnindexedChanges } from '../../storage/sessions/unindexed-changes.ts';
import { ReadsInFlight } from '../../storage/clickhouse/reads-in-flight.ts';
import { indexRow, indexSessions, listSessions, type SessionListFilter } from '../../storage/sessions/sessions-index.ts';
import { freePort } from '../../ops/stack/ports.ts';
import { waitUntil, type Service } from '../../ops/stack/process.ts';
import { launchService } from '../../ops/stack/service-process.ts';
import { startServices, type Services } from '../../ops/support/services.ts';
import { httpRequest } from '../../ops/stack/http-client.ts';

const config = readConfig();
const log = createLog({ logLevel: 'silent', hostId: 'sessions-list-memory' });

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const KEPT = 40;
const STREAM = 'rtmp://127.0.0.1:9/live/list-memory';

let services: Services;
let second: Service;
let secondMetrics: string;
let nc: NatsConnection;
let records: SessionRecords;
let clickhouse: ClickHouseClient;
let lists: SessionLists;
let progress: IndexProgress;
const newest = new NewestSessions(KEPT);

test.before(async () => {
  services = await startServices({ name: 'sessions-list-memory' });
  const id = 'sessions-list-memory-storage-2';
  const port = await freePort();
  secondMetrics = `http://127.0.0.1:${port}`;
  second = await launchService({
    id,
    role: 'storage',
    projectRoot: config.projectRoot,
    logFile: join(services.logDir, 'storage-2.log'),
    env: { ...process.env, STORAGE_WRITER: 'false', SESSION_LIST_MEMORY_PER_USER: '0', LOG_LEVEL: 'info' },
    metricsPort: port,
  });
  nc = await connectBus('sessions-list-memory', config.natsUrl, log);
  records = await SessionRecords.open(jetstream(nc), log, 1);
  await records.watch(undefined, newest);
  // The changes the index may not hold yet, from a watch of their own, never held back.
  const unindexed = new UnindexedChanges();
  await records.watch(undefined, unindexed);
  clickhouse = connectClickHouse(clickHouseServer(config), config.clickhouseDatabase);
  progress = new IndexProgress(await jetstreamManager(nc), clickhouse, unindexed, log);
  progress.start();
  lists = new SessionLists(newest, records, progress, clickhouse, new ReadsInFlight(config.storageReadsInFlightPerUser), KEPT, log);
});

test.after(async () => {
  await progress?.stop();
  records?.close();
  await clickhouse?.close();
  await nc?.close();
  await second?.stop();
  await services?.stop();
});

/**
 * Written as a host writes it, into the bucket (the storage service indexes it); or, as the
 * benchmarks load sessions, into the index alone.
 */
async function write(record: SessionRecord, indexOnly = false): Promise<number> {
  if (indexOnly) {
    await indexSessions(clickhouse, [indexRow(record, 1)]);
    return 0;
  }
  const written = (await records.update(record.id, () => record)) ?? (await records.create(record));
  return written.revision;
}

/** A session as a host writes it; an active one's heartbeat ahead, so that no host takes it over. */
function sessionRecord(user: string, name: string, createdAt: number, active = false): SessionRecord {
  return {
    id: newSessionId(createdAt),
    name,
    type: 'live_analysis',
    state: active ? 'active' : 'finished',
    createdAt,
    ...(active ? {} : { finishedAt: createdAt + HOUR, stopReason: 'client' as const }),
    user,
    product: 'tests',
    streamUri: STREAM,
    sensors: [],
    expiresAt: createdAt + 12 * HOUR,
    healthCheckAt: Date.now() + DAY,
    workerState: active ? 'working' : 'stopped',
    mediaSeconds: 0,
  };
}

/**
 * `count` sessions over half a year, newest sparse, some in one millisecond, some renamed, some
 * still active (their heartbeat ahead, so that no host takes them over), one in eight in the
 * index alone.
 */
async function seed(user: string, count: number, next: () => number): Promise<number> {
  const now = Date.now();
  let revision = 0;
  for (let i = 0; i < count; i++) {
    const createdAt = i % 9 === 3 ? now - 5 * DAY : now - Math.floor(next() ** 2 * 180 * DAY);
    const record = sessionRecord(user, `session ${i}`, createdAt, next() < 0.3);
    if (i % 8 === 5) {
      await write(record, true);
      continue;
    }
    revision = await write(record);
    if (next() < 0.3) revision = await write({ ...record, name: `renamed ${i}` });
  }
  return revision;
}

test('a page that memory answers is the page ClickHouse answers, over random pages and filters', async () => {
  const next = seededRandom(36);
  const many = `memory-many-${process.pid}`;
  const few = `memory-few-${process.pid}`;
  await seed(many, 150, next);
  const last = await seed(few, 25, next);
  await waitUntil('the watch to see every session', async () => newest.revision >= last, 30_000);
  const latest = await progress.latest();
  for (const user of [many, few]) assert.ok(await progress.userCaughtUp(user, latest, Date.now() + 30_000), `the index holds every session of ${user}`);
  // A user's first list is ClickHouse's, and reads the newest of the sessions table into memory.
  const now = Date.now();
  for (const user of [many, few]) await lists.page({ user, offset: 0, limit: 10, activeSinceMs: now - 200 * DAY }, Date.now() + 60_000);
  await waitUntil('both users read from the sessions table', async () => newest.seeded(many) && newest.seeded(few), 30_000);
  let fromMemory = 0;
  let declined = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.record({
        user: fc.constantFrom(many, few),
        state: fc.constantFrom(undefined, 'active' as const, 'finished' as const),
        type: fc.constantFrom(undefined, 'live_analysis' as const),
        offset: fc.integer({ min: 0, max: 60 }),
        limit: fc.integer({ min: 1, max: 100 }),
        fromDays: fc.option(fc.integer({ min: 0, max: 200 })),
        toDays: fc.option(fc.integer({ min: 0, max: 200 })),
        activeSinceDays: fc.integer({ min: 0, max: 200 }),
      }),
      async ({ user, state, type, offset, limit, fromDays, toDays, activeSinceDays }) => {
        const filter: SessionListFilter = {
          user,
          state,
          type,
          offset,
          limit,
          ...(fromDays !== null ? { fromMs: now - fromDays * DAY } : {}),
          ...(toDays !== null ? { toMs: now - toDays * DAY } : {}),
          activeSinceMs: now - activeSinceDays * DAY,
        };
        const remembered = newest.page(filter);
        if (!remembered) {
          declined++;
          return;
        }
        fromMemory++;
        assert.equal(remembered, await listSessions(clickhouse, filter), JSON.stringify(filter));
      },
    ),
    { numRuns: 300, seed: 36 },
  );
  // Both sides of the horizon were asked: pages memory holds, and pages it leaves to ClickHouse.
  assert.ok(fromMemory > 100, `${fromMemory} pages from memory`);
  assert.ok(declined > 10, `${declined} pages left to ClickHouse`);
});

/** Pages one storage service answered from `source`, from its /metrics. */
async function listedPages(metricsUrl: string, source: 'memory' | 'clickhouse'): Promise<number> {
  const text = await (await httpRequest(`${metricsUrl}/metrics`)).text;
  const line = text.split('\n').find((l) => l.startsWith(`emo_session_list_pages_total{source="${source}"}`));
  return line ? Number(line.split(' ')[1]) : 0;
}

test('a create, rename or stop shows in the creator\'s next list, whichever storage service answers', async () => {
  const { alice, bob } = services.users;
  const before = [await listedPages(services.metrics.storage, 'memory'), await listedPages(secondMetrics, 'clickhouse')];
  const list = async (query = '', token = alice.token) => {
    const reply = await services.api('GET', `/v1/sessions${query}`, { token });
    assert.is(reply.status, 200);
    return reply.body.data as { _id: string; name: string; state: string }[];
  };
  for (let i = 0; i < 8; i++) {
    const created = await services.api('POST', '/v1/sessions', { body: { name: `ryw ${i}`, streamUri: STREAM } });
    assert.is(created.status, 201, JSON.stringify(created.body));
    const id: string = created.body._id;
    const first = (await list())[0]!;
    assert.equal([first._id, first.name], [id, `ryw ${i}`]);
    const renamed = await services.api('PATCH', `/v1/sessions/${id}`, { body: { name: `ryw ${i} renamed` } });
    assert.is(renamed.status, 200, JSON.stringify(renamed.body));
    assert.is((await list())[0]!.name, `ryw ${i} renamed`);
    assert.is((await list('?state=active'))[0]!._id, id);
    const stopped = await services.api('POST', `/v1/sessions/${id}/stop`);
    assert.is(stopped.status, 200, JSON.stringify(stopped.body));
    assert.is((await list('?state=finished'))[0]!._id, id);
    assert.ok(!(await list('?state=active')).some((session) => session._id === id));
    assert.ok(!(await list('', bob.token)).some((session) => session._id === id), 'bob sees none of alice\'s sessions');
  }
  const after = [await listedPages(services.metrics.storage, 'memory'), await listedPages(secondMetrics, 'clickhouse')];
  assert.ok(after[0]! > before[0]! && after[1]! > before[1]!, `pages from memory, then from ClickHouse: ${before} -> ${after}`);
});

test('memory bounded in total keeps the users listed lately; what it answers is ClickHouse\'s page', async () => {
  const TOTAL = 50;
  const bounded = new NewestSessions(KEPT, TOTAL);
  const watched = await SessionRecords.open(jetstream(nc), log, 1);
  try {
    const now = Date.now();
    const [ann, ben] = ['ann', 'ben'].map((name) => `bounded-${name}-${process.pid}`) as [string, string];
    let last = 0;
    // Thirty finished sessions each: one user fits, two do not.
    for (const user of [ann, ben]) {
      for (let i = 0; i < 30; i++) last = await write(sessionRecord(user, `${user} ${i}`, now - (i + 1) * HOUR));
    }
    await watched.watch(undefined, bounded);
    await waitUntil('the watch to replay the bucket', async () => bounded.revision >= last, 30_000);
    assert.ok(bounded.size <= TOTAL, `${bounded.size} kept`);
    const boundedLists = new SessionLists(bounded, watched, progress, clickhouse, new ReadsInFlight(config.storageReadsInFlightPerUser), KEPT, log);
    const page = (user: string, offset = 0): SessionListFilter => ({ user, offset, limit: 10, activeSinceMs: now - DAY });
    const listedBy = async (user: string) => {
      await boundedLists.page(page(user), Date.now() + 30_000);
      await waitUntil(`${user} read back into memory`, async () => bounded.seeded(user), 30_000);
    };

    await listedBy(ann);
    assert.not.ok(bounded.seeded(ben), 'Ben, listed less lately, is forgotten');
    for (const offset of [0, 10, 19]) assert.equal(bounded.page(page(ann, offset)), await listSessions(clickhouse, page(ann, offset)));
    assert.is(bounded.page(page(ben)), undefined, 'ClickHouse answers Ben');

    // A change of Ann's while she is kept is listed from memory as ClickHouse lists it.
    const newer = await write(sessionRecord(ann, 'ann newer', now));
    await waitUntil('the watch to see it', async () => bounded.revision >= newer, 30_000);
    assert.ok(await progress.userCaughtUp(ann, newer, Date.now() + 30_000));
    assert.equal(bounded.page(page(ann)), await listSessions(clickhouse, page(ann)));
    assert.is(bounded.page(page(ann))!.records[0]!.name, 'ann newer');

    await listedBy(ben);
    assert.not.ok(bounded.seeded(ann), 'Ann forgotten in turn');
    assert.equal(bounded.page(page(ben, 10)), await listSessions(clickhouse, page(ben, 10)));
    assert.ok(bounded.size <= TOTAL, `${bounded.size} kept`);
  } finally {
    watched.close();
  }
});

/** Tells memory what the watch delivers, or, while held, keeps it back: a watch fallen behind. */
class HeldWatch implements WatchFollower {
  held = false;
  private pending: (() => void)[] = [];

  constructor(private readonly memory: NewestSessions) {}

  restarted(): void {
    this.pending = [];
    this.memory.restarted();
  }

  put(record: SessionRecord, revision: number): void {
    this.apply(() => this.memory.put(record, revision));
  }

  deleted(id: string, revision: number): void {
    this.apply(() => this.memory.deleted(id, revision));
  }

  release(): void {
    this.held = false;
    for (const apply of this.pending.splice(0)) apply();
  }

  private apply(change: () => void): void {
    if (this.held) this.pending.push(change);
    else change();
  }
}

test('memory behind the bucket: ClickHouse answers, with the change, and the metric says how far; caught up, memory answers again', async () => {
  const registry = new Registry();
  const metrics = new StorageMetrics(registry).sessionLists;
  const memory = new NewestSessions(KEPT);
  const watch = new HeldWatch(memory);
  const lagging = await SessionRecords.open(jetstream(nc), log, 1);
  try {
    await lagging.watch(undefined, watch);
    const behindLists = new SessionLists(memory, lagging, progress, clickhouse, new ReadsInFlight(config.storageReadsInFlightPerUser), KEPT, log, metrics);
    const user = `memory-behind-${process.pid}`;
    const now = Date.now();
    const filter: SessionListFilter = { user, offset: 0, limit: 10, activeSinceMs: now - DAY };
    const names = async () => (await behindLists.page(filter, Date.now() + 30_000)).records.map((record) => record.name);
    const pages = async (source: 'memory' | 'clickhouse') =>
      (await metrics.pages.get()).values.find((value) => value.labels.source === source)?.value ?? 0;
    const behind = async () => (await metrics.behind.get()).values[0]?.value;

    const first = await write(sessionRecord(user, 'first', now - HOUR));
    await waitUntil('the watch to see the first session', async () => memory.revision >= first, 30_000);
    await names();
    await waitUntil('the user read from the sessions table', async () => memory.seeded(user), 30_000);
    const fromMemory = await pages('memory');
    assert.equal(await names(), ['first']);
    assert.is(await pages('memory'), fromMemory + 1, 'memory answers while it is as new as the bucket');

    watch.held = true;
    const second = await write(sessionRecord(user, 'second', now));
    const fromClickHouse = await pages('clickhouse');
    assert.equal(await names(), ['second', 'first'], 'the change is listed though memory has not seen it');
    assert.is(await pages('clickhouse'), fromClickHouse + 1, 'ClickHouse answered');
    assert.ok((await behind())! >= 1, `behind by ${await behind()} revisions`);

    watch.release();
    assert.ok(memory.revision >= second, 'memory has caught up');
    assert.equal(await names(), ['second', 'first']);
    assert.is(await pages('memory'), fromMemory + 2, 'memory answers again');
    assert.is(await behind(), 0);
  } finally {
    lagging.close();
  }
});

test.run();

// The session list read in windows (storage/sessions/windows.ts) answers exactly what a sort of the
// whole history would: a user's sessions are written into the real index unevenly over a year
// and a half (bursts, gaps, two created in the same millisecond, several revisions each, in
// separate inserts so they are not merged), and every page is checked through the real
// service against the same list computed here.
import { readConfig } from '../../bus/config.ts';
import { seededRandom } from '../../ops/support/seeded-random.ts';
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import type { SessionRecord } from '../../bus/contracts/session.ts';
import { newSessionId } from '../../bus/ids.ts';
import { indexRow } from '../../storage/sessions/sessions-index.ts';
import { connectClickHouse, type ClickHouseClient, clickHouseServer } from '../../storage/clickhouse/clickhouse.ts';
import { startServices, type Services } from '../../ops/support/services.ts';

const config = readConfig();

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const STREAM = 'rtmp://127.0.0.1:9/live/list';

let services: Services;
let clickhouse: ClickHouseClient;
/** The latest revision of each of alice's sessions, as the list must show them. */
const latest = new Map<string, SessionRecord>();

test.before(async () => {
  services = await startServices({ name: 'sessions-list' });
  clickhouse = connectClickHouse(clickHouseServer(config), config.clickhouseDatabase);
  await seed(services.users.alice.user);
});

test.after(async () => {
  await clickhouse?.close();
  await services?.stop();
});

async function seed(user: string): Promise<void> {
  const next = seededRandom(7);
  const now = Date.now();
  const created: number[] = [];
  // The newest are sparser than the average, which a dense day long ago drives up: windows
  // sized by it come up short near the top and are widened, several times over.
  for (let i = 0; i < 12; i++) created.push(now - 60_000 - Math.floor(next() * 12 * HOUR));
  for (let i = 0; i < 60; i++) created.push(now - 2 * DAY - Math.floor(next() * 60 * DAY));
  for (let i = 0; i < 350; i++) created.push(now - 200 * DAY - Math.floor(next() * DAY));
  for (let i = 0; i < 20; i++) created.push(now - 400 * DAY - Math.floor(next() * 90 * DAY));
  // Two sessions created in the same millisecond: the id orders them.
  created.push(created[5]!, created[40]!);
  const revisions: SessionRecord[][] = [[], [], []];
  created.forEach((createdAt, i) => {
    const record: SessionRecord = {
      id: newSessionId(createdAt),
      name: `listed ${i}`,
      type: 'live_analysis',
      state: 'active',
      createdAt,
      user,
      product: 'tests',
      streamUri: STREAM,
      sensors: [],
      expiresAt: createdAt + 12 * HOUR,
      healthCheckAt: createdAt,
      workerState: 'working',
      mediaSeconds: 0,
    };
    revisions[0]!.push(record);
    // Old sessions all ended; of the recent ones, some still run and some were renamed.
    const ends = createdAt < now - 12 * HOUR || next() < 0.7;
    let last = record;
    if (next() < 0.4) revisions[1]!.push((last = { ...last, name: `renamed ${i}` }));
    if (ends) {
      revisions[2]!.push((last = { ...last, state: 'finished', finishedAt: createdAt + 1000, workerState: 'stopped', stopReason: 'client' }));
    }
    latest.set(record.id, last);
  });
  for (const [revision, records] of revisions.entries()) {
    await clickhouse.insert({ table: 'sessions', values: records.map((r) => indexRow(r, revision + 1)), format: 'JSONEachRow' });
  }
}

/** What the list must answer, computed from every session at once. */
function expected(query: { state?: string; fromMs?: number; toMs?: number; limit: number; offset: number }) {
  const all = [...latest.values()]
    .filter((s) => query.state === undefined || s.state === query.state)
    .filter((s) => query.fromMs === undefined || s.createdAt >= query.fromMs)
    .filter((s) => query.toMs === undefined || s.createdAt < query.toMs)
    .sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1));
  const page = all.slice(query.offset, query.offset + query.limit);
  return { ids: page.map((s) => s.id), names: page.map((s) => s.name), hasMore: all.length > query.offset + query.limit };
}

async function check(query: { state?: string; fromMs?: number; toMs?: number; limit: number; offset: number }) {
  const params = new URLSearchParams({ limit: String(query.limit), offset: String(query.offset) });
  if (query.state) params.set('state', query.state);
  if (query.fromMs !== undefined) params.set('from', new Date(query.fromMs).toISOString());
  if (query.toMs !== undefined) params.set('to', new Date(query.toMs).toISOString());
  const reply = await services.api('GET', `/v1/sessions?${params}`);
  assert.is(reply.status, 200, JSON.stringify(reply.body));
  const want = expected(query);
  const label = params.toString();
  assert.equal(reply.body.data.map((s: { _id: string }) => s._id), want.ids, label);
  assert.equal(reply.body.data.map((s: { name: string }) => s.name), want.names, `${label}: latest revisions`);
  assert.is(reply.body.hasMore, want.hasMore, `${label}: hasMore`);
}

test('every page across windows is the page of the whole sorted history, hasMore exact', async () => {
  const total = latest.size;
  for (const limit of [1, 10, 100]) {
    for (const offset of [0, 11, 12, 13, 40, 71, 72, 73, 100, 250, total - limit - 1, total - limit, total - 1, total, total + 5]) {
      await check({ limit, offset: Math.max(0, offset) });
    }
  }
});

test('state filters pick the latest revision: a finished session is not active', async () => {
  for (const state of ['active', 'finished']) {
    for (const offset of [0, 3, 40, 100, 400]) await check({ state, limit: 10, offset });
  }
  await check({ state: 'active', limit: 100, offset: 0 });
  const typed = await services.api('GET', '/v1/sessions?type=live_analysis&limit=100');
  assert.equal(typed.body.data.map((s: { _id: string }) => s._id), expected({ limit: 100, offset: 0 }).ids);
});

test('from is inclusive and to exclusive, to the millisecond, at any window', async () => {
  const sorted = [...latest.values()].map((s) => s.createdAt).sort((a, b) => b - a);
  const tie = sorted.find((at, i) => at === sorted[i + 1])!;
  for (const [from, to] of [[sorted[70]!, sorted[5]!], [sorted[300]!, sorted[60]!], [sorted.at(-1)!, sorted[100]!], [tie, tie + 1]]) {
    for (const offset of [0, 7, 90]) {
      await check({ fromMs: from, toMs: to, limit: 10, offset });
      await check({ state: 'finished', fromMs: from, toMs: to, limit: 3, offset });
    }
  }
  await check({ fromMs: Date.now() + DAY, limit: 10, offset: 0 });
});

test('another user sees none of them', async () => {
  const other = await services.api('GET', '/v1/sessions?limit=100', { token: services.users.bob.token });
  assert.is(other.status, 200);
  assert.not.ok(other.body.data.some((s: { _id: string }) => latest.has(s._id)));
});

test('a create, a rename and a stop are in the list when they return', async () => {
  const created = await services.api('POST', '/v1/sessions', { body: { name: 'live one', streamUri: STREAM } });
  assert.is(created.status, 201);
  const id = created.body._id;
  const first = await services.api('GET', '/v1/sessions?limit=1');
  assert.is(first.body.data[0]._id, id, 'the newest session heads the list');
  assert.is(first.body.hasMore, true);
  assert.is((await services.api('PATCH', `/v1/sessions/${id}`, { body: { name: 'renamed live one' } })).status, 200);
  const active = await services.api('GET', '/v1/sessions?state=active&limit=1');
  assert.is(active.body.data[0].name, 'renamed live one');
  assert.is((await services.api('POST', `/v1/sessions/${id}/stop`)).status, 200);
  const finished = await services.api('GET', '/v1/sessions?state=finished&limit=1');
  assert.is(finished.body.data[0]._id, id);
  assert.is(finished.body.data[0].state, 'finished');
  const stillActive = await services.api('GET', '/v1/sessions?state=active&limit=100');
  assert.not.ok(stillActive.body.data.some((s: { _id: string }) => s._id === id));
});

test.run();

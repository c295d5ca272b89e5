// The REST contract of sessions (spec 4.1-4.5): create, list, get, rename and stop, against the
// real gateway and actor host. Streams point at a closed local port: the worker keeps
// reconnecting, which is all these tests need.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { randomBytes } from 'node:crypto';
import { SignJWT } from 'jose';
import { WORKER_STATES } from '../../bus/contracts/session.ts';
import { readConfig } from '../../bus/config.ts';
import { connectBus } from '../../bus/connection.ts';
import { createLog } from '../../bus/log.ts';
import { connectClickHouse, clickHouseServer, queryRows } from '../../storage/clickhouse/clickhouse.ts';
import { sql } from '../../storage/clickhouse/sql.ts';
import { waitUntil } from '../../ops/stack/process.ts';
import { startServices, type Reply, type Services } from '../../ops/support/services.ts';

const config = readConfig();

const JWT_SECRET = randomBytes(32).toString('hex');
const JWT_PRODUCT = 'contract-tests';
const STREAM = 'rtmp://127.0.0.1:9/live/x';
/** What clients, analysts and live subscribers see of both: no path, no query. */
const STREAM_SHOWN = 'rtmp://127.0.0.1:9';
// The RTMP path ends in the stream key, and a query may carry a token: both secrets too.
const STREAM_WITH_CREDENTIALS = 'rtmp://user:secret@127.0.0.1:9/live/key-secret?token=token-secret';
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

let services: Services;
/** Every reply of this file, to prove that no stream credential ever leaves the service. */
const replies: Reply[] = [];

async function api(method: string, path: string, options: { body?: unknown; token?: string } = {}): Promise<Reply> {
  const reply = await services.api(method, path, options);
  replies.push(reply);
  return reply;
}

/** A token for a user nobody else has: each test sees only its own sessions. */
async function freshUser(): Promise<{ user: string; token: string }> {
  const user = `user-${randomBytes(6).toString('hex')}`;
  const token = await new SignJWT({ product: JWT_PRODUCT })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(user)
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(JWT_SECRET));
  return { user, token };
}

async function create(token: string, name = 'session', streamUri = STREAM): Promise<any> {
  const reply = await api('POST', '/v1/sessions', { body: { name, streamUri }, token });
  assert.is(reply.status, 201, JSON.stringify(reply.body));
  return reply.body;
}

async function list(token: string, query = ''): Promise<any> {
  const reply = await api('GET', `/v1/sessions${query ? `?${query}` : ''}`, { token });
  assert.is(reply.status, 200, JSON.stringify(reply.body));
  return reply.body;
}

const ids = (page: { data: { _id: string }[] }) => page.data.map((s) => s._id);

/** The fields that do not move on their own while a session runs. */
const settled = (s: any) => ({
  _id: s._id, name: s.name, type: s.type, state: s.state, timestamp: s.timestamp, config: s.config,
  sources: s.sources, product: s.product, user: s.user, version: s.version,
  expires: s.meta.expires, stopReason: s.meta.stopReason,
});

test.before(async () => {
  services = await startServices({
    name: 'sessions-api',
    env: { AUTH_JWT_SECRET: JWT_SECRET, HOST_CAPACITY: '64', STREAM_UNREACHABLE_SECONDS: '900' },
  });
});

test.after(async () => {
  await services?.stop();
});

test('create answers 201 with the whole session object', async () => {
  const { user, token } = await freshUser();
  const before = Date.now();
  const reply = await api('POST', '/v1/sessions', { body: { name: 'Interview 1', streamUri: STREAM_WITH_CREDENTIALS }, token });
  const after = Date.now();
  assert.is(reply.status, 201, JSON.stringify(reply.body));
  assert.match(reply.headers.get('content-type') ?? '', /application\/json/);
  const s = reply.body;
  assert.equal(Object.keys(s).sort(), [
    '_id', 'config', 'duration', 'meta', 'name', 'product', 'sources', 'state', 'timestamp', 'type', 'user', 'version',
  ]);
  assert.match(s._id, /^[0-9a-f]{24}$/);
  assert.is(s.name, 'Interview 1');
  assert.is(s.type, 'live_analysis');
  assert.is(s.state, 'active');
  assert.match(s.timestamp, ISO_MS);
  const created = Date.parse(s.timestamp);
  assert.ok(created >= before - 5 && created <= after + 5, `timestamp ${s.timestamp} is not the time of the request`);
  // Ids are time-ordered: their first 8 hex digits are the creation second.
  assert.is(parseInt(s._id.slice(0, 8), 16), Math.floor(created / 1000));
  assert.type(s.duration, 'number');
  assert.ok(Number.isFinite(s.duration) && s.duration >= 0 && s.duration < 60, `duration ${s.duration}`);
  assert.equal(s.config, { removeMedia: true });
  assert.equal(s.sources, [{ id: 'stream', name: STREAM_SHOWN, type: 'stream', device: 'rtmp' }]);
  assert.match(s.meta.expires, ISO_MS);
  assert.ok(Date.parse(s.meta.expires) > created, 'expires after creation');
  assert.match(s.meta.healthCheck, ISO_MS);
  assert.ok((WORKER_STATES as readonly string[]).includes(s.meta.workerState), s.meta.workerState);
  assert.is(s.meta.stopReason, undefined);
  assert.is(s.user, user);
  assert.is(s.product, JWT_PRODUCT);
  assert.is(s.version, 1);
});

test('user and product come from a tokens-file token too', async () => {
  const { alice } = services.users;
  const s = await create(alice.token, 'from the tokens file');
  assert.is(s.user, alice.user);
  assert.is(s.product, alice.product);
});

test('every device scheme is accepted and named in sources[0], by scheme, host and port', async () => {
  const { token } = await freshUser();
  for (const [uri, device] of [
    ['rtmps://127.0.0.1:9/live/x', 'rtmps'],
    ['rtsp://127.0.0.1:9/cam', 'rtsp'],
  ] as const) {
    const s = await create(token, device, uri);
    assert.equal(s.sources[0], { id: 'stream', name: `${device}://127.0.0.1:9`, type: 'stream', device });
  }
});

test('a name of 256 characters is accepted whole', async () => {
  const { token } = await freshUser();
  const name = 'n'.repeat(255) + 'é';
  const s = await create(token, name);
  assert.is(s.name, name);
  assert.is((await api('GET', `/v1/sessions/${s._id}`, { token })).body.name, name);
});

test('a stream URI of exactly 2048 characters is accepted', async () => {
  const { token } = await freshUser();
  const prefix = 'rtmp://127.0.0.1:9/live/';
  const uri = prefix + 'k'.repeat(2048 - prefix.length);
  const s = await create(token, 'long uri', uri);
  assert.is(s.sources[0].name, 'rtmp://127.0.0.1:9');
});

test('get returns the session as created, with a growing duration', async () => {
  const { token } = await freshUser();
  const s = await create(token);
  await new Promise((resolve) => setTimeout(resolve, 50));
  const reply = await api('GET', `/v1/sessions/${s._id}`, { token });
  assert.is(reply.status, 200);
  assert.equal(settled(reply.body), settled(s));
  assert.ok(reply.body.duration >= s.duration, 'duration does not go back');
  assert.ok(reply.body.duration > 0, 'an active session has been running for some time');
});

test('list: newest first, right after each create', async () => {
  const { token } = await freshUser();
  const created: any[] = [];
  for (const name of ['first', 'second', 'third']) {
    created.push(await create(token, name));
    const page = await list(token);
    assert.equal(ids(page), created.map((s) => s._id).reverse(), `after creating ${name}`);
  }
  const page = await list(token);
  assert.equal(page.data.map((s: any) => s.name), ['third', 'second', 'first']);
  const times = page.data.map((s: any) => Date.parse(s.timestamp));
  assert.equal(times, [...times].sort((a, b) => b - a));
  assert.equal(settled(page.data[2]), settled(created[0]));
  assert.is(page.hasMore, false);
  assert.is(page.offset, 0);
  assert.is(page.limit, 10);
});

test('10 creates of one user at once: each answered 201, 10 sessions listed', async () => {
  const { token } = await freshUser();
  // They reach the host together and are admitted together: one change of the user's quota entry.
  const replies = await Promise.all(Array.from({ length: 10 }, (_, i) => api('POST', '/v1/sessions', { body: { name: `camera ${i}`, streamUri: STREAM }, token })));
  assert.equal(replies.map((reply) => reply.status), replies.map(() => 201), JSON.stringify(replies.find((reply) => reply.status !== 201)?.body));
  assert.is((await list(token, 'limit=100')).data.length, 10);
  // Their streams never connect: stopped, they give the host's room back to the tests after. A
  // stop answered 503 (a host busy past the bus timeout) is asked again, as a client would.
  for (const { body } of replies) {
    await waitUntil(`session ${body._id} stopped`, async () => {
      const stop = await api('POST', `/v1/sessions/${body._id}/stop`, { token });
      return stop.status === 200 || (stop.status === 400 && (await api('GET', `/v1/sessions/${body._id}`, { token })).body.state === 'finished');
    }, 60_000);
  }
});

test('list: only the caller\'s own sessions', async () => {
  const one = await freshUser();
  const other = await freshUser();
  const mine = await create(one.token, 'mine');
  assert.equal(ids(await list(one.token)), [mine._id]);
  assert.equal(ids(await list(other.token)), []);
});

test('rename: PATCH name answers the renamed session; get and list show it at once', async () => {
  const { token } = await freshUser();
  const s = await create(token, 'old name');
  const reply = await api('PATCH', `/v1/sessions/${s._id}`, { body: { name: 'new name' }, token });
  assert.is(reply.status, 200, JSON.stringify(reply.body));
  assert.equal(settled(reply.body), { ...settled(s), name: 'new name' });
  assert.is((await api('GET', `/v1/sessions/${s._id}`, { token })).body.name, 'new name');
  assert.equal((await list(token)).data.map((x: any) => x.name), ['new name']);
  assert.equal((await list(token, 'state=active')).data.map((x: any) => x.name), ['new name']);
});

test('stop: 200 with state finished and stopReason client; get and list agree at once', async () => {
  const { token } = await freshUser();
  const s = await create(token);
  const reply = await api('POST', `/v1/sessions/${s._id}/stop`, { token });
  assert.is(reply.status, 200, JSON.stringify(reply.body));
  assert.is(reply.body.state, 'finished');
  assert.is(reply.body.meta.stopReason, 'client');
  assert.is(reply.body.meta.workerState, 'stopped');
  assert.equal(settled(reply.body), { ...settled(s), state: 'finished', stopReason: 'client' });
  const got = await api('GET', `/v1/sessions/${s._id}`, { token });
  assert.is(got.body.state, 'finished');
  assert.is(got.body.meta.stopReason, 'client');
  assert.equal(ids(await list(token, 'state=finished')), [s._id]);
  assert.equal(ids(await list(token, 'state=active')), []);
  // The duration ends at the stop.
  await new Promise((resolve) => setTimeout(resolve, 50));
  const later = await api('GET', `/v1/sessions/${s._id}`, { token });
  assert.is(later.body.duration, got.body.duration);
});

test('stop twice: the second answers 400 and changes nothing', async () => {
  const { token } = await freshUser();
  const s = await create(token);
  const first = await api('POST', `/v1/sessions/${s._id}/stop`, { token });
  assert.is(first.status, 200);
  const second = await api('POST', `/v1/sessions/${s._id}/stop`, { token });
  assert.is(second.status, 400);
  assert.is(second.body.error, true);
  assert.is(second.body.status, 400);
  assert.type(second.body.code, 'string');
  assert.match(second.body.message, /active/);
  const after = await api('GET', `/v1/sessions/${s._id}`, { token });
  assert.equal(settled(after.body), settled(first.body));
  assert.is(after.body.duration, first.body.duration);
});

test('list filters: state, type, from (inclusive), to (exclusive), limit, offset, hasMore', async () => {
  const { token } = await freshUser();
  const [a, b, c] = [await create(token, 'a'), await create(token, 'b'), await create(token, 'c')];
  const [ta, tb, tc] = [a, b, c].map((s) => Date.parse(s.timestamp)) as [number, number, number];
  assert.ok(ta < tb && tb < tc, 'creation times are distinct');
  const query = async (q: string) => ids(await list(token, q));

  await api('POST', `/v1/sessions/${a._id}/stop`, { token });
  assert.equal(await query('state=active'), [c._id, b._id]);
  assert.equal(await query('state=finished'), [a._id]);
  assert.equal(await query('type=live_analysis'), [c._id, b._id, a._id]);
  assert.equal(await query('type=live_analysis&state=active'), [c._id, b._id]);

  assert.equal(await query(`from=${b.timestamp}`), [c._id, b._id]);
  assert.equal(await query(`to=${b.timestamp}`), [a._id]);
  assert.equal(await query(`from=${a.timestamp}&to=${c.timestamp}`), [b._id, a._id]);
  assert.equal(await query(`from=${new Date(tc + 1).toISOString()}`), []);
  // The same instant with an offset, and a bare date (midnight UTC).
  const plusTwo = new Date(tb + 2 * 3600_000).toISOString().replace('Z', '+02:00');
  assert.equal(await query(`from=${encodeURIComponent(plusTwo)}`), [c._id, b._id]);
  assert.equal(await query(`from=${a.timestamp.slice(0, 10)}`), [c._id, b._id, a._id]);
  const tomorrow = new Date(tc + 86_400_000).toISOString().slice(0, 10);
  assert.equal(await query(`to=${tomorrow}`), [c._id, b._id, a._id]);

  const first = await list(token, 'limit=1');
  assert.equal([ids(first), first.hasMore, first.offset, first.limit], [[c._id], true, 0, 1]);
  const middle = await list(token, 'limit=1&offset=1');
  assert.equal([ids(middle), middle.hasMore, middle.offset, middle.limit], [[b._id], true, 1, 1]);
  const last = await list(token, 'limit=2&offset=1');
  assert.equal([ids(last), last.hasMore], [[b._id, a._id], false]);
  const beyond = await list(token, 'offset=3');
  assert.equal([ids(beyond), beyond.hasMore, beyond.offset], [[], false, 3]);
  const exact = await list(token, 'limit=3');
  assert.equal([ids(exact).length, exact.hasMore], [3, false]);
  const most = await list(token, 'limit=100&state=active&offset=1');
  assert.equal([ids(most), most.hasMore, most.limit], [[b._id], false, 100]);
});

test('list: 10 per page by default, and hasMore past the tenth', async () => {
  const { token } = await freshUser();
  const created: string[] = [];
  for (let i = 0; i < 11; i++) {
    const s = await create(token, `s${i}`);
    created.push(s._id);
    await api('POST', `/v1/sessions/${s._id}/stop`, { token });
  }
  const newestFirst = created.reverse();
  const page = await list(token);
  assert.equal([page.data.length, page.hasMore, page.limit, page.offset], [10, true, 10, 0]);
  assert.equal(ids(page), newestFirst.slice(0, 10));
  const rest = await list(token, 'offset=10');
  assert.equal([ids(rest), rest.hasMore], [newestFirst.slice(10), false]);
  assert.equal(ids(await list(token, 'limit=100')), newestFirst);
});

test('stream credentials, key and token are never echoed, by any endpoint, the index or a live subject', async () => {
  const { token } = await freshUser();
  // What analysts may read live: the subjects the production `analytics` user is given.
  const nc = await connectBus('sessions-api test', config.natsUrl, createLog(config));
  const published: string[] = [];
  for (const subject of ['emo.rows.>', 'emo.live.>']) {
    nc.subscribe(subject, { callback: (_error, msg) => void published.push(`${msg.subject} ${msg.string()}`) });
  }
  const clickhouse = connectClickHouse(clickHouseServer(config), config.clickhouseDatabase);
  try {
    const start = replies.length;
    const s = await create(token, 'with credentials', STREAM_WITH_CREDENTIALS);
    assert.equal(s.sources[0].name, STREAM_SHOWN);
    await api('GET', `/v1/sessions/${s._id}`, { token });
    await list(token);
    await api('PATCH', `/v1/sessions/${s._id}`, { body: { name: 'renamed' }, token });
    await api('POST', `/v1/sessions/${s._id}/stop`, { token });
    await api('POST', `/v1/sessions/${s._id}/stop`, { token });
    await list(token, 'state=finished');
    await api('GET', `/v1/sessions/${s._id}`, { token });
    assert.is(replies.length - start, 8);
    for (const reply of replies) {
      const text = JSON.stringify(reply.body) + JSON.stringify([...reply.headers]);
      assert.not.match(text, /secret/, `a reply carried a stream secret: ${text.slice(0, 300)}`);
      assert.not.match(text, /user@/, `a reply carried the stream user name: ${text.slice(0, 300)}`);
    }
    // The index (analysts' `sessions` table) has the create, the rename and the stop.
    let docs: string[] = [];
    await waitUntil('the index to hold the stop', async () => {
      docs = (await queryRows<{ doc: string }>(clickhouse, sql`SELECT doc FROM sessions WHERE id = ${s._id}`)).map((row) => row.doc);
      return docs.some((doc) => JSON.parse(doc).state === 'finished');
    }, 15_000);
    for (const doc of docs) {
      assert.is(JSON.parse(doc).streamName, STREAM_SHOWN);
      assert.not.match(doc, /secret|user@/, doc);
    }
    assert.ok(published.some((message) => message.includes(s._id)), 'the session was announced live');
    for (const message of published) assert.not.match(message, /secret|user@/, message);
  } finally {
    await clickhouse.close();
    await nc.close();
  }
});

test.run();

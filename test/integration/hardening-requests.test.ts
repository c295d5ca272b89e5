// Hostile requests that once stopped the service or left a trace: text that cannot go into a
// NATS header or ClickHouse, numbers too large for SQL, a user taking every slot, a create the
// host could not finish in time, a client retrying a create, and a refused request whose body
// was still on its way.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { rawRequest } from '../../ops/fuzz/raw-http.ts';
import { startServices, type Services } from '../../ops/support/services.ts';

// Nothing listens there: sessions stay active (reconnecting) without any analysis work.
const STREAM = 'rtmp://127.0.0.1:9/live/x';
const MAX_ACTIVE = 2;
const MAX_SOURCES = 2;

let services: Services;

test.before(async () => {
  services = await startServices({
    name: 'hardening-requests',
    env: { USER_MAX_ACTIVE_SESSIONS: String(MAX_ACTIVE), SESSION_MAX_SOURCES: String(MAX_SOURCES) },
  });
});

test.after(async () => {
  await services?.stop();
});

const alive = () => {
  for (const service of [services.gateway, ...services.hosts]) {
    assert.ok(service.pid > 0 && process.kill(service.pid, 0), `${service.name} is alive`);
  }
};

async function activeIds(token = services.users.alice.token): Promise<string[]> {
  const reply = await services.api('GET', '/v1/sessions?state=active&limit=100', { token });
  assert.is(reply.status, 200);
  return reply.body.data.map((s: { _id: string }) => s._id);
}

async function stopAll(token = services.users.alice.token): Promise<void> {
  for (const id of await activeIds(token)) await services.api('POST', `/v1/sessions/${id}/stop`, { token });
}

test('names with line breaks, control characters or lone surrogates are refused, and the host lives', async () => {
  const { body: session } = await services.api('POST', '/v1/sessions', { body: { name: 'text', streamUri: STREAM } });
  for (const name of ['two\nlines', 'carriage\rreturn', 'nul\u0000', 'bell\u0007', 'lone \ud800', 'lone \udc00 low', 'c1 \u0085']) {
    const created = await services.api('POST', '/v1/sessions', { body: { name, streamUri: STREAM } });
    assert.is(created.status, 400, `create ${JSON.stringify(name)}`);
    assert.equal(created.body.details?.[0]?.field, 'body.name');
    const renamed = await services.api('PATCH', `/v1/sessions/${session._id}`, { body: { name } });
    assert.is(renamed.status, 400, `rename ${JSON.stringify(name)}`);
    // Twice: the duplicate-name error once carried the name into a NATS header.
    for (let i = 0; i < 2; i++) {
      const source = await services.api('POST', `/v1/sessions/${session._id}/events`, { body: { name, format: 'text' } });
      assert.is(source.status, 400, `source ${JSON.stringify(name)}`);
      assert.equal(source.body.details?.[0]?.field, 'body.name');
    }
  }
  const same = await services.api('GET', `/v1/sessions/${session._id}`);
  assert.is(same.body.name, 'text');
  assert.equal(same.body.sources.length, 1);
  // Text events may hold tabs and line feeds, nothing else.
  const source = await services.api('POST', `/v1/sessions/${session._id}/events`, { body: { name: 'notes', format: 'text' } });
  const sourceId = source.body.id;
  const ok = await services.api('POST', `/v1/sessions/${session._id}/events/${sourceId}`, { body: { time: 1, data: 'a\tb\nc ✓ 😀' } });
  assert.is(ok.status, 201);
  const bad = await services.api('POST', `/v1/sessions/${session._id}/events/${sourceId}`, { body: [{ time: 1, data: 'ok' }, { time: 2, data: 'x\ud800' }] });
  assert.is(bad.status, 400);
  assert.match(bad.body.message, /body\.1\.data/);
  alive();
  await stopAll();
});

test('numbers beyond what a query can hold are 400, naming the parameter', async () => {
  const { body: session } = await services.api('POST', '/v1/sessions', { body: { name: 'numbers', streamUri: STREAM } });
  const cases: [string, string][] = [
    ['/v1/sessions?offset=1000000000000000000000', 'query.offset'],
    ['/v1/sessions?offset=9007199254740993', 'query.offset'],
    ['/v1/sessions?offset=1000000001', 'query.offset'],
    ['/v1/sessions?limit=1e2', 'query.limit'],
    [`/v1/sessions/${session._id}/audio/features?start=100000000000000000000000`, 'query.start'],
    [`/v1/sessions/${session._id}/audio/features?end=1e400`, 'query.end'],
    [`/v1/sessions/${session._id}/audio/transcription?offset=99999999999999999999`, 'query.offset'],
    [`/v1/sessions/${session._id}/events?from=10000000000000`, 'query.from'],
    [`/v1/sessions/${session._id}/events?offset=1.5`, 'query.offset'],
  ];
  for (const [path, field] of cases) {
    const reply = await services.api('GET', path);
    assert.is(reply.status, 400, `${path}: ${JSON.stringify(reply.body)}`);
    assert.ok(reply.body.details?.some((d: { field: string }) => d.field === field), `${path} names ${field}`);
  }
  const far = await services.api('GET', '/v1/sessions?offset=1000000000');
  assert.is(far.status, 200);
  assert.equal(far.body.data, []);
  alive();
  await stopAll();
});

test('a user past the active-session quota gets 429 while another user still gets sessions', async () => {
  for (let i = 0; i < MAX_ACTIVE; i++) {
    const reply = await services.api('POST', '/v1/sessions', { body: { name: `q${i}`, streamUri: STREAM } });
    assert.is(reply.status, 201);
  }
  const refused = await services.api('POST', '/v1/sessions', { body: { name: 'one too many', streamUri: STREAM } });
  assert.is(refused.status, 429);
  assert.is(refused.body.code, 'quota_exceeded');
  assert.is((await activeIds()).length, MAX_ACTIVE, 'the refused create made nothing');
  const bob = await services.api('POST', '/v1/sessions', { token: services.users.bob.token, body: { name: 'bob', streamUri: STREAM } });
  assert.is(bob.status, 201, 'another user is not affected');
  // A stopped session gives its slot back.
  const [first] = await activeIds();
  await services.api('POST', `/v1/sessions/${first}/stop`);
  const again = await services.api('POST', '/v1/sessions', { body: { name: 'after a stop', streamUri: STREAM } });
  assert.is(again.status, 201);
  await stopAll();
  await stopAll(services.users.bob.token);
});

test('concurrent creates cannot overshoot the quota', async () => {
  const replies = await Promise.all(
    Array.from({ length: 6 }, (_, i) => services.api('POST', '/v1/sessions', { body: { name: `race${i}`, streamUri: STREAM } })),
  );
  assert.is(replies.filter((r) => r.status === 201).length, MAX_ACTIVE, JSON.stringify(replies.map((r) => r.status)));
  assert.ok(replies.every((r) => r.status === 201 || r.status === 429));
  assert.is((await activeIds()).length, MAX_ACTIVE);
  await stopAll();
});

test('a session has at most SESSION_MAX_SOURCES sources', async () => {
  const { body: session } = await services.api('POST', '/v1/sessions', { body: { name: 'sources', streamUri: STREAM } });
  for (let i = 0; i < MAX_SOURCES; i++) {
    const reply = await services.api('POST', `/v1/sessions/${session._id}/events`, { body: { name: `s${i}`, format: 'scalar' } });
    assert.is(reply.status, 201);
  }
  const refused = await services.api('POST', `/v1/sessions/${session._id}/events`, { body: { name: 'extra', format: 'scalar' } });
  assert.is(refused.status, 429);
  assert.is(refused.body.code, 'quota_exceeded');
  const after = await services.api('GET', `/v1/sessions/${session._id}`);
  assert.is(after.body.sources.length, 1 + MAX_SOURCES);
  await stopAll();
});

test('a create retried with the same Idempotency-Key returns the first session', async () => {
  const headers = { 'Idempotency-Key': `retry-${Date.now()}` };
  const body = { name: 'idempotent', streamUri: STREAM };
  const first = await services.api('POST', '/v1/sessions', { body, headers });
  assert.is(first.status, 201);
  const again = await services.api('POST', '/v1/sessions', { body, headers });
  assert.is(again.status, 201);
  assert.is(again.body._id, first.body._id);
  // Concurrent retries: still one session.
  const burst = await Promise.all(Array.from({ length: 4 }, () => services.api('POST', '/v1/sessions', { body, headers })));
  for (const reply of burst) {
    assert.ok(reply.status === 201 || reply.status === 503, String(reply.status));
    if (reply.status === 201) assert.is(reply.body._id, first.body._id);
  }
  assert.equal(await activeIds(), [first.body._id]);
  const other = await services.api('POST', '/v1/sessions', { body: { ...body, name: 'different' }, headers });
  assert.is(other.status, 400);
  assert.is(other.body.details?.[0]?.field, 'header.idempotency-key');
  const invalid = await services.api('POST', '/v1/sessions', { body, headers: { 'Idempotency-Key': 'x'.repeat(256) } });
  assert.is(invalid.status, 400);
  assert.is(invalid.body.details?.[0]?.field, 'header.idempotency-key');
  // The same key for another user is another key.
  const bob = await services.api('POST', '/v1/sessions', { token: services.users.bob.token, body, headers });
  assert.is(bob.status, 201);
  assert.not.equal(bob.body._id, first.body._id);
  await stopAll();
  await stopAll(services.users.bob.token);
});

test('every API answer, errors and the OpenAPI document included, is nosniff and no-store', async () => {
  const { body: session } = await services.api('POST', '/v1/sessions', { body: { name: 'headers', streamUri: STREAM } });
  const answers = {
    list: await services.api('GET', '/v1/sessions?limit=1'),
    session: await services.api('GET', `/v1/sessions/${session._id}`),
    missing: await services.api('GET', `/v1/sessions/${'0'.repeat(24)}`),
    noRoute: await services.api('GET', '/v1/nothing-here'),
    invalid: await services.api('GET', '/v1/sessions?limit=-1'),
    unauthorized: await services.api('GET', '/v1/sessions', { token: '' }),
    wrongMethod: await services.api('PUT', '/v1/sessions'),
    openApi: await services.api('GET', '/v1/openapi.json', { token: '' }),
    stopped: await services.api('POST', `/v1/sessions/${session._id}/stop`),
  };
  const statuses = Object.fromEntries(Object.entries(answers).map(([name, answer]) => [name, answer.status]));
  assert.equal(statuses, { list: 200, session: 200, missing: 404, noRoute: 404, invalid: 400, unauthorized: 401, wrongMethod: 405, openApi: 200, stopped: 200 });
  for (const [name, answer] of Object.entries(answers)) {
    assert.is(answer.headers.get('x-content-type-options'), 'nosniff', name);
    assert.is(answer.headers.get('cache-control'), 'no-store', name);
  }
});

test('a request naming a transfer coding other than chunked is refused before it acts, its trailing bytes with it', async () => {
  const created = await services.api('POST', '/v1/sessions', { body: { name: 'framing', streamUri: STREAM } });
  assert.is(created.status, 201);
  const id = created.body._id;
  const port = Number(new URL(services.baseUrl).port);
  // The bytes after the head would otherwise be read as another request on the connection.
  for (const coding of ['D', 'gzip', 'chunked, identity', '', ' ']) {
    const answer = await rawRequest(port, {
      method: 'POST',
      target: `/v1/sessions/${id}/stop`,
      headers: [['Authorization', `Bearer ${services.users.alice.token}`], ['Transfer-Encoding', coding]],
      body: `[{"data":"${'e'.repeat(60_000)}"}]`,
    });
    assert.is(answer.status, 400, `"${coding}"`);
    const session = await services.api('GET', `/v1/sessions/${id}`);
    assert.is(session.body.state, 'active', `"${coding}": the stop did not happen`);
  }
  alive();
  await stopAll();
});

test('a request refused before its body is read gets its answer, though the connection closes after it', async () => {
  const port = Number(new URL(services.baseUrl).port);
  // Nearly the body limit, sent with `Connection: close`: far more than the socket buffers hold,
  // so most of it is still on its way when the answer is ready.
  const body = JSON.stringify({ name: 'n'.repeat(1_000_000), streamUri: STREAM });
  const before = await activeIds();
  for (let i = 0; i < 8; i++) {
    const unauthenticated = await rawRequest(port, { method: 'POST', target: '/v1/sessions', headers: [['Content-Type', 'application/json']], body });
    assert.is(unauthenticated.status, 401, `try ${i}: no token`);
    assert.is(JSON.parse(unauthenticated.body).code, 'unauthorized');
    const notJson = await rawRequest(port, {
      method: 'POST',
      target: '/v1/sessions',
      headers: [['Content-Type', 'text/plain'], ['Authorization', `Bearer ${services.users.alice.token}`]],
      body,
    });
    assert.is(notJson.status, 400, `try ${i}: not JSON`);
    assert.is(JSON.parse(notJson.body).code, 'unsupported_content_type');
  }
  assert.equal(await activeIds(), before, 'no session was made');
  alive();
});

test('an Expect other than 100-continue is ignored: the request gets the API\'s own answer, body read', async () => {
  const port = Number(new URL(services.baseUrl).port);
  // As the fuzz run sent it: a large body behind an expectation the server does not know.
  const body = JSON.stringify({ name: 'n'.repeat(400_000), streamUri: STREAM });
  for (const expect of ['', 'x-unknown', '200-ok']) {
    const notJson = await rawRequest(port, {
      method: 'POST',
      target: '/v1/sessions',
      headers: [['Content-Type', ''], ['Authorization', `Bearer ${services.users.alice.token}`], ['Expect', expect]],
      body,
    });
    assert.is(notJson.status, 400, `Expect "${expect}"`);
    assert.is(JSON.parse(notJson.body).code, 'unsupported_content_type');
  }
  const created = await rawRequest(port, {
    method: 'POST',
    target: '/v1/sessions',
    headers: [['Content-Type', 'application/json'], ['Authorization', `Bearer ${services.users.alice.token}`], ['Expect', 'x-unknown']],
    body: JSON.stringify({ name: 'expecting', streamUri: STREAM }),
  });
  assert.is(created.status, 201, created.body);
  assert.is((await services.api('GET', `/v1/sessions/${JSON.parse(created.body)._id}`)).body.name, 'expecting');
  alive();
  await stopAll();
});

test.run();

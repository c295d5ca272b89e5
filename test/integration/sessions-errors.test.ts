// Bad requests to the session endpoints: each answers the API's error body with the right
// status, names the offending field, and leaves every session as it was.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { SignJWT } from 'jose';
import { startServices, type Reply, type Services } from '../../ops/support/services.ts';
import { httpRequest, replyHeaders } from '../../ops/stack/http-client.ts';

const JWT_SECRET = randomBytes(32).toString('hex');
const STREAM = 'rtmp://127.0.0.1:9/live/x';

let services: Services;
let token: string;
/** An active session of the caller, and one of another user, both left running. */
let mine: any;
let theirs: any;

async function sign(claims: { sub: string; product?: string }, secret = JWT_SECRET, expires: string | number = '1h') {
  return new SignJWT({ product: claims.product ?? 'tests' })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(claims.sub)
    .setIssuedAt()
    .setExpirationTime(expires)
    .sign(new TextEncoder().encode(secret));
}

const api = (method: string, path: string, options: { body?: unknown; raw?: string; headers?: Record<string, string>; token?: string } = {}) =>
  services.api(method, path, { token, ...options });

/** The API error body: exactly these keys, plus `details` when there is a field to name. */
function assertError(reply: Reply, status: number, field?: string): void {
  assert.is(reply.status, status, JSON.stringify(reply.body));
  const body = reply.body;
  assert.type(body, 'object', `the body is JSON: ${String(body)}`);
  assert.is(body.error, true);
  assert.is(body.status, status);
  assert.type(body.message, 'string');
  assert.ok(body.message.length > 0);
  assert.type(body.code, 'string');
  assert.match(body.code, /^[a-z_]+$/);
  for (const key of Object.keys(body)) assert.ok(['error', 'status', 'message', 'code', 'details'].includes(key), `unexpected key ${key}`);
  if (field) {
    assert.ok(body.message.includes(field), `the message "${body.message}" names ${field}`);
    assert.ok(body.details?.some((d: { field: string }) => d.field === field), `details name ${field}: ${JSON.stringify(body.details)}`);
  }
}

/** Everything the caller can see, minus what moves by itself while sessions run. */
async function snapshot(): Promise<unknown> {
  const reply = await api('GET', '/v1/sessions?limit=100');
  assert.is(reply.status, 200);
  return reply.body.data.map((s: any) => [s._id, s.name, s.state, s.meta.stopReason, s.sources]);
}

async function unchanged(request: () => Promise<Reply>): Promise<Reply> {
  const before = await snapshot();
  const theirsBefore = (await api('GET', `/v1/sessions/${theirs._id}`, { token: services.users.bob.token })).body;
  const reply = await request();
  assert.equal(await snapshot(), before, 'the sessions are unchanged');
  const theirsAfter = (await api('GET', `/v1/sessions/${theirs._id}`, { token: services.users.bob.token })).body;
  assert.equal([theirsAfter.name, theirsAfter.state], [theirsBefore.name, theirsBefore.state], 'the other user\'s session is unchanged');
  return reply;
}

const create = (body: unknown) => unchanged(() => api('POST', '/v1/sessions', { body }));
const patch = (body: unknown) => unchanged(() => api('PATCH', `/v1/sessions/${mine._id}`, { body }));
const query = (q: string) => unchanged(() => api('GET', `/v1/sessions?${q}`));

test.before(async () => {
  services = await startServices({
    name: 'sessions-errors',
    env: { AUTH_JWT_SECRET: JWT_SECRET, STREAM_UNREACHABLE_SECONDS: '900' },
  });
  token = await sign({ sub: `errors-${randomBytes(6).toString('hex')}` });
  mine = (await api('POST', '/v1/sessions', { body: { name: 'mine', streamUri: STREAM } })).body;
  theirs = (await api('POST', '/v1/sessions', { body: { name: 'theirs', streamUri: STREAM }, token: services.users.bob.token })).body;
  assert.match(mine._id, /^[0-9a-f]{24}$/);
  assert.match(theirs._id, /^[0-9a-f]{24}$/);
});

test.after(async () => {
  await services?.stop();
});

// Create

test('create: malformed JSON is 400', async () => {
  const reply = await unchanged(() =>
    api('POST', '/v1/sessions', { raw: '{"name": "x", "streamUri": ', headers: { 'Content-Type': 'application/json' } }));
  assertError(reply, 400);
  assert.match(reply.body.message, /JSON/);
});

test('create: a body that is not JSON is 400', async () => {
  const form = await unchanged(() => api('POST', '/v1/sessions', {
    raw: `name=x&streamUri=${encodeURIComponent(STREAM)}`,
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
  }));
  assertError(form, 400);
  assert.match(form.body.message, /JSON/);
  const text = await unchanged(() => api('POST', '/v1/sessions', {
    raw: JSON.stringify({ name: 'x', streamUri: STREAM }),
    headers: { 'Content-Type': 'text/plain' },
  }));
  assertError(text, 400);
});

test('create: no body at all is 400 naming both fields', async () => {
  const reply = await unchanged(() => api('POST', '/v1/sessions'));
  assertError(reply, 400, 'body.name');
  assertError(reply, 400, 'body.streamUri');
});

test('create: a missing field is 400 naming it', async () => {
  assertError(await create({ name: 'x' }), 400, 'body.streamUri');
  assertError(await create({ streamUri: STREAM }), 400, 'body.name');
});

test('create: an extra field is 400 naming it', async () => {
  const reply = await create({ name: 'x', streamUri: STREAM, state: 'finished' });
  assertError(reply, 400, 'body.state');
  assertError(await create({ name: 'x', streamUri: STREAM, user: 'someone-else' }), 400, 'body.user');
});

test('create: a mistyped field is 400 naming it', async () => {
  assertError(await create({ name: 42, streamUri: STREAM }), 400, 'body.name');
  assertError(await create({ name: 'x', streamUri: ['rtmp://127.0.0.1:9/a'] }), 400, 'body.streamUri');
  assertError(await create({ name: null, streamUri: STREAM }), 400, 'body.name');
});

test('create: a body that is not an object is 400', async () => {
  assertError(await create([{ name: 'x', streamUri: STREAM }]), 400);
  assertError(await create('x'), 400);
  assertError(await create(7), 400);
});

test('create: a name of 0 or 257 characters is 400 naming body.name', async () => {
  assertError(await create({ name: '', streamUri: STREAM }), 400, 'body.name');
  assertError(await create({ name: 'n'.repeat(257), streamUri: STREAM }), 400, 'body.name');
});

test('create: a stream URI of another scheme is 400 naming body.streamUri', async () => {
  for (const streamUri of [
    'http://127.0.0.1:9/live/x',
    'https://example.com/live.m3u8',
    'file:///etc/passwd',
    'concat:/etc/passwd|/etc/hosts',
    '/var/media/clip.flv',
    'udp://127.0.0.1:9',
    'rtmp:relative',
    '',
  ]) {
    assertError(await create({ name: 'x', streamUri }), 400, 'body.streamUri');
  }
});

test('create: a stream URI over 2048 characters is 400 naming body.streamUri', async () => {
  const prefix = 'rtmp://127.0.0.1:9/live/';
  assertError(await create({ name: 'x', streamUri: prefix + 'k'.repeat(2049 - prefix.length) }), 400, 'body.streamUri');
});

test('create: a body over 1 MiB is 413', async () => {
  const reply = await create({ name: 'x', streamUri: STREAM, padding: 'p'.repeat(1024 * 1024) });
  assertError(reply, 413);
});

test('create: a chunked body over 1 MiB is 413', async () => {
  const reply = await unchanged(() => postChunked('/v1/sessions', 20, 64 * 1024));
  assertError(reply, 413);
});

/** Streams `chunks` chunks of spaces without a Content-Length, and reads the reply even if the server stops reading first. */
function postChunked(path: string, chunks: number, chunkBytes: number): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const outgoing = request(`${services.baseUrl}${path}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' },
    });
    outgoing.once('response', (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (part: string) => (text += part));
      response.once('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(text), headers: replyHeaders(response.headers) }));
    });
    // Once the server has answered it may close the connection under the remaining chunks.
    outgoing.on('error', (error) => (outgoing.writableEnded ? undefined : reject(error)));
    const chunk = ' '.repeat(chunkBytes);
    let sent = 0;
    const writeMore = () => {
      while (sent < chunks) {
        sent++;
        if (!outgoing.write(chunk)) return void outgoing.once('drain', writeMore);
      }
      outgoing.end();
    };
    writeMore();
  });
}

// List

test('list: limit out of range or not a number is 400 naming query.limit', async () => {
  for (const limit of ['0', '101', 'x', '-1', '', '1,2']) {
    assertError(await query(`limit=${limit}`), 400, 'query.limit');
  }
});

test('list: a fractional limit or offset is 400, not truncated', async () => {
  assertError(await query('limit=1.5'), 400, 'query.limit');
  assertError(await query('limit=1e1'), 400, 'query.limit');
  assertError(await query('offset=0.5'), 400, 'query.offset');
});

test('list: a negative or non-numeric offset is 400 naming query.offset', async () => {
  assertError(await query('offset=-1'), 400, 'query.offset');
  assertError(await query('offset=first'), 400, 'query.offset');
});

test('list: an unknown state or type is 400 naming it', async () => {
  assertError(await query('state=paused'), 400, 'query.state');
  assertError(await query('state=ACTIVE'), 400, 'query.state');
  assertError(await query('type=video'), 400, 'query.type');
});

test('list: from and to that are not dates are 400 naming them', async () => {
  assertError(await query('from=yesterday'), 400, 'query.from');
  assertError(await query('to=1.7e12'), 400, 'query.to');
  assertError(await query('to=-1700000000000'), 400, 'query.to');
  assertError(await query('from=2026-13-45'), 400, 'query.from');
  assertError(await query('to=2026-02-30T25:61:00Z'), 400, 'query.to');
});

test('list: an unknown parameter is 400 naming it', async () => {
  assertError(await query('sort=name'), 400, 'query.sort');
});

// Update

test('update: any field but name is 400 naming it, and the name is not changed either', async () => {
  for (const field of ['state', 'user', 'product', '_id', 'timestamp', 'duration', 'config', 'sources', 'meta', 'version', 'type']) {
    assertError(await patch({ [field]: 'x' }), 400, `body.${field}`);
  }
  assertError(await patch({ name: 'renamed', state: 'finished' }), 400, 'body.state');
  assert.is((await api('GET', `/v1/sessions/${mine._id}`)).body.name, 'mine');
});

test('update: a bad name is 400 naming body.name', async () => {
  assertError(await patch({}), 400, 'body.name');
  assertError(await patch({ name: '' }), 400, 'body.name');
  assertError(await patch({ name: 'n'.repeat(257) }), 400, 'body.name');
  assertError(await patch({ name: 5 }), 400, 'body.name');
  assertError(await patch([{ name: 'x' }]), 400);
});

test('update: malformed JSON and non-JSON bodies are 400', async () => {
  const malformed = await unchanged(() => api('PATCH', `/v1/sessions/${mine._id}`, {
    raw: '{"name": }', headers: { 'Content-Type': 'application/json' },
  }));
  assertError(malformed, 400);
  const form = await unchanged(() => api('PATCH', `/v1/sessions/${mine._id}`, {
    raw: 'name=x', headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
  }));
  assertError(form, 400);
});

// Stop

test('stop: twice is 400 and the session stays as the first stop left it', async () => {
  const created = await api('POST', '/v1/sessions', { body: { name: 'stopped twice', streamUri: STREAM } });
  const id = created.body._id;
  const first = await api('POST', `/v1/sessions/${id}/stop`);
  assert.is(first.status, 200);
  const second = await unchanged(() => api('POST', `/v1/sessions/${id}/stop`));
  assertError(second, 400);
  const after = (await api('GET', `/v1/sessions/${id}`)).body;
  assert.equal([after.state, after.meta.stopReason, after.duration], ['finished', 'client', first.body.duration]);
});

// Ids and ownership

test('unknown and malformed ids are 404 with one and the same body', async () => {
  const unknown = randomBytes(12).toString('hex');
  const requests: [string, string, unknown?][] = [];
  for (const id of [unknown, 'not-an-id', 'A'.repeat(24), `${mine._id.slice(0, 23)}g`, `${mine._id}0`, '0'.repeat(24)]) {
    requests.push(['GET', `/v1/sessions/${id}`], ['PATCH', `/v1/sessions/${id}`, { name: 'x' }], ['POST', `/v1/sessions/${id}/stop`]);
  }
  const bodies = new Set<string>();
  for (const [method, path, body] of requests) {
    const reply = await unchanged(() => api(method, path, { body }));
    assertError(reply, 404);
    bodies.add(JSON.stringify(reply.body));
  }
  assert.is(bodies.size, 1, [...bodies].join('\n'));
});

test('another user\'s session is 404, byte for byte the body of an unknown id', async () => {
  const raw = async (method: string, path: string, body?: unknown) => {
    const response = await httpRequest(services.baseUrl + path, {
      method,
      headers: { Authorization: `Bearer ${token}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: response.status, text: response.text, type: response.headers.get('content-type') };
  };
  const unknown = randomBytes(12).toString('hex');
  for (const [method, suffix, body] of [['GET', ''], ['PATCH', '', { name: 'taken over' }], ['POST', '/stop']] as const) {
    const other = await unchanged(async () => {
      const r = await raw(method, `/v1/sessions/${theirs._id}${suffix}`, body);
      return { status: r.status, body: r, headers: replyHeaders({}) };
    });
    const missing = await raw(method, `/v1/sessions/${unknown}${suffix}`, body);
    assert.is(other.status, 404);
    assert.equal(other.body, missing, `${method} ${suffix}`);
  }
  const theirsNow = (await api('GET', `/v1/sessions/${theirs._id}`, { token: services.users.bob.token })).body;
  assert.equal([theirsNow.name, theirsNow.state], ['theirs', 'active']);
  const listed = (await api('GET', '/v1/sessions?limit=100')).body.data.map((s: any) => s._id);
  assert.not.ok(listed.includes(theirs._id), 'the list never shows another user\'s session');
});

// Authentication

test('a missing or wrong token is 401 and creates nothing', async () => {
  const wrongSecret = await sign({ sub: 'someone' }, randomBytes(32).toString('hex'));
  const expired = await sign({ sub: 'someone' }, JWT_SECRET, Math.floor(Date.now() / 1000) - 60);
  const attempts: Record<string, string>[] = [
    {},
    { Authorization: 'Bearer' },
    { Authorization: 'Bearer not-a-token' },
    { Authorization: `Basic ${Buffer.from('alice:pw').toString('base64')}` },
    { Authorization: `Bearer ${wrongSecret}` },
    { Authorization: `Bearer ${expired}` },
    { Authorization: `Bearer ${token}x` },
  ];
  for (const headers of attempts) {
    for (const [method, path] of [['GET', '/v1/sessions'], ['POST', '/v1/sessions'], ['GET', `/v1/sessions/${mine._id}`], ['POST', `/v1/sessions/${mine._id}/stop`]] as const) {
      const body = method === 'POST' && path === '/v1/sessions' ? { name: 'x', streamUri: STREAM } : undefined;
      const reply = await unchanged(() => services.api(method, path, { token: '', headers, body }));
      assertError(reply, 401);
      assert.is(reply.headers.get('www-authenticate'), 'Bearer');
    }
  }
  assert.is((await api('GET', `/v1/sessions/${mine._id}`)).body.state, 'active');
});

test.run();

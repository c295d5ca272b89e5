// Custom sensor sources and events (spec 4.10, 4.11, section 6) through the REST API:
// registration, sending one event or a batch on both paths, validation that rejects a whole
// request, ownership, and the paginated list.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../../ops/stack/ports.ts';
import { startServices, type Services } from '../../ops/support/services.ts';

let services: Services;
let session: string;
let scalar: { id: string };
let text: { id: string };

const eventsPath = (id = session) => `/v1/sessions/${id}/events`;

async function createSession(token?: string): Promise<string> {
  // Nothing listens there: the session stays active while its worker retries.
  const reply = await services.api('POST', '/v1/sessions', {
    body: { name: 'events', streamUri: `rtmp://127.0.0.1:${await freePort()}/live/none` },
    token,
  });
  assert.is(reply.status, 201, JSON.stringify(reply.body));
  return reply.body._id;
}

/** Every event of the session, once the writer has stored `expected` of them. */
async function storedEvents(id: string, expected: number, query = ''): Promise<any[]> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const all: any[] = [];
    for (let offset = 0; ; offset += 100) {
      const page = await services.api('GET', `${eventsPath(id)}?limit=100&offset=${offset}${query}`);
      assert.is(page.status, 200, JSON.stringify(page.body));
      all.push(...page.body.data);
      if (!page.body.hasMore) break;
    }
    if (all.length >= expected || Date.now() > deadline) return all;
    await sleep(250);
  }
}

test.before(async () => {
  services = await startServices({ name: 'events-api', env: { STREAM_UNREACHABLE_SECONDS: '600' } });
  session = await createSession();
});

test.after(async () => {
  await services?.stop();
});

test('registering a source: 201, listed in the session, names unique', async () => {
  const reply = await services.api('POST', eventsPath(), { body: { name: 'thermometer', format: 'scalar' } });
  assert.is(reply.status, 201);
  assert.equal(Object.keys(reply.body).sort(), ['device', 'format', 'id', 'name', 'type']);
  assert.is(reply.body.device, 'generic_sensor');
  assert.is(reply.body.type, 'generic_sensor');
  assert.is(reply.body.format, 'scalar');
  assert.is(reply.body.name, 'thermometer');
  scalar = reply.body;
  text = (await services.api('POST', eventsPath(), { body: { name: 'notes', format: 'text' } })).body;

  const got = await services.api('GET', `/v1/sessions/${session}`);
  const sensors = got.body.sources.filter((s: any) => s.type === 'generic_sensor');
  assert.equal(sensors.map((s: any) => s.id), [scalar.id, text.id]);
  assert.is(got.body.sources[0].type, 'stream');

  const duplicate = await services.api('POST', eventsPath(), { body: { name: 'thermometer', format: 'text' } });
  assert.is(duplicate.status, 400);
  assert.is(duplicate.body.error, true);
  assert.match(duplicate.body.message, 'body.name');
  const badFormat = await services.api('POST', eventsPath(), { body: { name: 'x', format: 'json' } });
  assert.is(badFormat.status, 400);
  assert.match(badFormat.body.message, 'body.format');
});

test('one event or an array, on the source path and on the shared path', async () => {
  const one = await services.api('POST', `${eventsPath()}/${scalar.id}`, { body: { time: 1.5, data: 36.6 } });
  assert.is(one.status, 201);
  const user = services.users.alice.user;
  assert.equal(one.body, [{ time: 1.5, data: 36.6, source: scalar.id, session, user, type: 'sensor_report' }]);

  const many = await services.api('POST', `${eventsPath()}/${text.id}`, { body: [{ time: 2, data: 'door opened' }, { time: 3, data: '' }] });
  assert.is(many.status, 201);
  assert.equal(many.body.map((e: any) => [e.time, e.data, e.source, e.type]), [
    [2, 'door opened', text.id, 'sensor_report'],
    [3, '', text.id, 'sensor_report'],
  ]);

  const shared = await services.api('POST', eventsPath(), { body: { source: scalar.id, time: 4, data: -1.25 } });
  assert.is(shared.status, 201);
  assert.equal(shared.body, [{ time: 4, data: -1.25, source: scalar.id, session, user, type: 'sensor_report' }]);
  const sharedMany = await services.api('POST', eventsPath(), {
    body: [{ source: text.id, time: 5, data: 'a' }, { source: text.id, time: 6, data: 'b' }],
  });
  assert.is(sharedMany.status, 201);
  assert.is(sharedMany.body.length, 2);

  const stored = await storedEvents(session, 6);
  assert.equal(stored.map((e: any) => [e.time, e.data]), [[1.5, 36.6], [2, 'door opened'], [3, ''], [4, -1.25], [5, 'a'], [6, 'b']]);
});

test('one invalid item rejects the whole request, naming its index and field; nothing is stored', async () => {
  const before = (await storedEvents(session, 6)).length;
  const cases: { path: string; body: unknown; field: RegExp }[] = [
    { path: `${eventsPath()}/${scalar.id}`, body: [{ time: 10, data: 1 }, { time: 11, data: 'warm' }, { time: 12, data: 3 }], field: /body(\.|\[)1\]?\.data/ },
    { path: `${eventsPath()}/${text.id}`, body: [{ time: 10, data: 'ok' }, { time: 11, data: 7 }], field: /body(\.|\[)1\]?\.data/ },
    { path: `${eventsPath()}/${scalar.id}`, body: [{ time: 10, data: 1 }, { time: -1, data: 2 }], field: /body(\.|\[)1\]?\.time/ },
    { path: `${eventsPath()}/${text.id}`, body: [{ time: 10, data: 'x'.repeat(4097) }], field: /body(\.|\[)0\]?\.data/ },
    { path: `${eventsPath()}/${scalar.id}`, body: [{ time: 10, data: 1 }, { time: 11, data: 'NaN' }], field: /body(\.|\[)1\]?\.data/ },
    { path: `${eventsPath()}/${scalar.id}`, body: [{ time: 10, data: 1, extra: true }], field: /body(\.|\[)0\]?\.extra/ },
    { path: `${eventsPath()}/${scalar.id}`, body: [{ time: 10 }], field: /body(\.|\[)0\]?\.data/ },
    { path: eventsPath(), body: [{ source: scalar.id, time: 10, data: 1 }, { source: text.id, time: 11, data: 'x' }], field: /body(\.|\[)1\]?\.source/ },
  ];
  for (const { path, body, field } of cases) {
    const reply = await services.api('POST', path, { body });
    assert.is(reply.status, 400, JSON.stringify(body).slice(0, 100));
    assert.is(reply.body.error, true);
    assert.match(reply.body.message, field, reply.body.message);
  }
  // Numbers JSON cannot carry (1e999 parses as Infinity) are refused for scalars, alone or in a batch.
  for (const raw of ['{"time": 10, "data": 1e999}', '[{"time": 10, "data": 1}, {"time": 1e999, "data": 2}]']) {
    const reply = await services.api('POST', `${eventsPath()}/${scalar.id}`, { raw, headers: { 'Content-Type': 'application/json' } });
    assert.is(reply.status, 400, raw);
  }
  const tooMany = Array.from({ length: 1001 }, (_, i) => ({ time: i, data: i }));
  const over = await services.api('POST', `${eventsPath()}/${scalar.id}`, { body: tooMany });
  assert.is(over.status, 400);
  assert.match(over.body.message, '1000');

  await sleep(2500);
  assert.is((await storedEvents(session, before)).length, before);
});

test('exactly 1000 events in one request are accepted', async () => {
  const body = Array.from({ length: 1000 }, (_, i) => ({ time: 100 + i / 100, data: i }));
  const reply = await services.api('POST', `${eventsPath()}/${scalar.id}`, { body });
  assert.is(reply.status, 201);
  assert.is(reply.body.length, 1000);
});

test('unknown sources, other sessions and other users are not found', async () => {
  const other = await createSession();
  const otherSource = (await services.api('POST', eventsPath(other), { body: { name: 'elsewhere', format: 'scalar' } })).body;
  const wrongSession = await services.api('POST', `${eventsPath()}/${otherSource.id}`, { body: { time: 1, data: 1 } });
  assert.is(wrongSession.status, 404);
  assert.is(wrongSession.body.code, 'not_found');
  assert.is((await services.api('POST', eventsPath(), { body: { source: 'nope', time: 1, data: 1 } })).status, 404);

  const bob = services.users.bob.token;
  assert.is((await services.api('POST', eventsPath(), { body: { name: 'bobs', format: 'text' }, token: bob })).status, 404);
  assert.is((await services.api('POST', `${eventsPath()}/${scalar.id}`, { body: { time: 1, data: 1 }, token: bob })).status, 404);
  assert.is((await services.api('GET', eventsPath(), { token: bob })).status, 404);
});

test('a finished session takes no sources and no events', async () => {
  const id = await createSession();
  const source = (await services.api('POST', eventsPath(id), { body: { name: 'late', format: 'scalar' } })).body;
  assert.is((await services.api('POST', `/v1/sessions/${id}/stop`)).status, 200);
  const event = await services.api('POST', `${eventsPath(id)}/${source.id}`, { body: { time: 1, data: 1 } });
  assert.is(event.status, 400);
  assert.is(event.body.code, 'session_not_active');
  assert.is((await services.api('POST', eventsPath(id), { body: { name: 'later', format: 'text' } })).status, 400);
});

test('the list: pages, order, source and time filters', async () => {
  const id = await createSession();
  const a = (await services.api('POST', eventsPath(id), { body: { name: 'a', format: 'scalar' } })).body;
  const b = (await services.api('POST', eventsPath(id), { body: { name: 'b', format: 'text' } })).body;
  const even = Array.from({ length: 13 }, (_, i) => ({ time: i * 2, data: i * 2 }));
  const odd = Array.from({ length: 12 }, (_, i) => ({ time: i * 2 + 1, data: `t${i * 2 + 1}` }));
  assert.is((await services.api('POST', `${eventsPath(id)}/${a.id}`, { body: even })).status, 201);
  assert.is((await services.api('POST', `${eventsPath(id)}/${b.id}`, { body: odd })).status, 201);
  assert.is((await storedEvents(id, 25)).length, 25);

  const first = await services.api('GET', `${eventsPath(id)}?limit=10`);
  assert.equal([first.body.hasMore, first.body.offset, first.body.limit], [true, 0, 10]);
  assert.equal(first.body.data.map((e: any) => e.time), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  const last = await services.api('GET', `${eventsPath(id)}?limit=10&offset=20`);
  assert.equal([last.body.hasMore, last.body.offset], [false, 20]);
  assert.equal(last.body.data.map((e: any) => e.time), [20, 21, 22, 23, 24]);
  const defaults = await services.api('GET', eventsPath(id));
  assert.is(defaults.body.data.length, 10);

  const desc = await services.api('GET', `${eventsPath(id)}?order=desc&limit=3`);
  assert.equal(desc.body.data.map((e: any) => e.time), [24, 23, 22]);
  const bySource = await services.api('GET', `${eventsPath(id)}?source=${b.id}&limit=100`);
  assert.is(bySource.body.data.length, 12);
  assert.ok(bySource.body.data.every((e: any) => e.source === b.id && typeof e.data === 'string'));
  const window = await services.api('GET', `${eventsPath(id)}?from=5&to=10&limit=100`);
  assert.equal(window.body.data.map((e: any) => e.time), [5, 6, 7, 8, 9]);

  for (const query of ['limit=0', 'limit=101', 'offset=-1', 'order=sideways', 'from=-1', 'from=10&to=5', 'colour=red']) {
    const reply = await services.api('GET', `${eventsPath(id)}?${query}`);
    assert.is(reply.status, 400, query);
    assert.is(reply.body.error, true);
  }
});

test.run();

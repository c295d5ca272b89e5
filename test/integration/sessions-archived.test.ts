// A session whose record has aged out of the sessions bucket (SESSION_RECORD_MAX_AGE_SECONDS,
// a week) is archived: the session index answers for it (storage/sessions/archive.ts). Its
// owner reads it, its results and its place in the list as before, cannot rename it, and can
// delete it, after which it answers 404 at once and its rows leave ClickHouse; another user
// finds it nowhere, and that user's own archived session is untouched. An aged-out session is
// what a week leaves: its index row and its result rows in ClickHouse, and no record.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { readConfig } from '../../bus/config.ts';
import type { SessionRecord } from '../../bus/contracts/session.ts';
import { newSessionId } from '../../bus/ids.ts';
import { connectClickHouse, clickHouseServer, queryRows, type ClickHouseClient } from '../../storage/clickhouse/clickhouse.ts';
import { sql } from '../../storage/clickhouse/sql.ts';
import { indexRow, indexSessions } from '../../storage/sessions/sessions-index.ts';
import { waitUntil } from '../../ops/stack/process.ts';
import { startServices, type Services } from '../../ops/support/services.ts';

const config = readConfig();
const DAY = 86_400_000;
const SECONDS = 60;
const PURGE_WINDOW_SECONDS = 2;

let services: Services;
let clickhouse: ClickHouseClient;

test.before(async () => {
  services = await startServices({ name: 'sessions-archived', env: { PURGE_WINDOW_SECONDS: String(PURGE_WINDOW_SECONDS) } });
  clickhouse = connectClickHouse(clickHouseServer(config), config.clickhouseDatabase);
});

test.after(async () => {
  await clickhouse?.close();
  await services?.stop();
});

/** A finished session of `user` created `daysAgo` days ago, as its index and its results hold it, without a record. */
async function archivedSession(user: string, name: string, daysAgo: number): Promise<string> {
  const createdAt = Date.now() - daysAgo * DAY;
  const record: SessionRecord = {
    id: newSessionId(createdAt),
    name,
    type: 'live_analysis',
    state: 'finished',
    createdAt,
    finishedAt: createdAt + SECONDS * 1000,
    stopReason: 'client',
    user,
    product: 'tests',
    streamUri: 'rtmp://127.0.0.1:9/live/archived',
    sensors: [],
    expiresAt: createdAt + DAY,
    healthCheckAt: createdAt + SECONDS * 1000,
    workerState: 'stopped',
    mediaSeconds: SECONDS,
  };
  await indexSessions(clickhouse, [indexRow(record, 1)]);
  const day = new Date(createdAt).toISOString().slice(0, 10);
  await clickhouse.insert({
    table: 'audio_seconds',
    values: Array.from({ length: SECONDS }, (_, second) => ({ session: record.id, second, frequency: 120, intensity: 60, voiced: 1, speech: 1, day })),
    format: 'JSONEachRow',
  });
  return record.id;
}

/** Rows of the session in a table, counted without FINAL: a copy left behind counts. */
async function rowsOf(table: 'audio_seconds' | 'sessions', id: string): Promise<number> {
  const column = table === 'sessions' ? 'id' : 'session';
  const [row] = await queryRows<{ rows: string }>(clickhouse, `SELECT count() AS rows FROM ${table} WHERE ${column} = ${sql`${id}`}`);
  return Number(row!.rows);
}

test('an archived session is read, listed and deleted by its owner alone, and renamed by no one', async () => {
  const { alice, bob } = services.users;
  const id = await archivedSession(alice.user, 'archived of alice', 10);
  const other = await archivedSession(bob.user, 'archived of bob', 9);
  const features = (session: string) => `/v1/sessions/${session}/audio/features?granularity=10`;

  const read = await services.api('GET', `/v1/sessions/${id}`, { token: alice.token });
  assert.is(read.status, 200, JSON.stringify(read.body));
  assert.is(read.body.name, 'archived of alice');
  assert.is(read.body.state, 'finished');
  assert.is(read.body.meta.mediaSeconds, SECONDS);
  const timeline = await services.api('GET', features(id), { token: alice.token });
  assert.is(timeline.status, 200, JSON.stringify(timeline.body));
  assert.is(timeline.body.timeline.length, SECONDS / 10, JSON.stringify(timeline.body));
  const listed = await services.api('GET', '/v1/sessions?limit=100', { token: alice.token });
  assert.ok(listed.body.data.some((session: any) => session._id === id), JSON.stringify(listed.body));

  // Another user finds it nowhere, and can neither change nor delete it.
  for (const [method, path] of [['GET', `/v1/sessions/${id}`], ['GET', features(id)], ['DELETE', `/v1/sessions/${id}`], ['POST', `/v1/sessions/${id}/stop`]] as const) {
    const reply = await services.api(method, path, { token: bob.token });
    assert.is(reply.status, 404, `${method} ${path} by another user: ${reply.status} ${JSON.stringify(reply.body)}`);
  }
  const renamedByOther = await services.api('PATCH', `/v1/sessions/${id}`, { body: { name: 'taken' }, token: bob.token });
  assert.is(renamedByOther.status, 404);

  // Read-only for its owner: a rename is refused, a stop finds it finished; neither changes it.
  const renamed = await services.api('PATCH', `/v1/sessions/${id}`, { body: { name: 'renamed' }, token: alice.token });
  assert.is(renamed.status, 409, JSON.stringify(renamed.body));
  assert.is(renamed.body.code, 'session_archived');
  const stopped = await services.api('POST', `/v1/sessions/${id}/stop`, { token: alice.token });
  assert.is(stopped.status, 400, JSON.stringify(stopped.body));
  assert.is(stopped.body.code, 'session_not_active');
  assert.equal((await services.api('GET', `/v1/sessions/${id}`, { token: alice.token })).body, read.body);

  // Deleted: gone at once, from every read and the list; its rows leave with the next purge round.
  const deleted = await services.api('DELETE', `/v1/sessions/${id}`, { token: alice.token });
  assert.is(deleted.status, 204, JSON.stringify(deleted.body));
  for (const [method, path] of [['GET', `/v1/sessions/${id}`], ['GET', features(id)], ['DELETE', `/v1/sessions/${id}`]] as const) {
    const reply = await services.api(method, path, { token: alice.token });
    assert.is(reply.status, 404, `${method} ${path} after the DELETE: ${reply.status} ${JSON.stringify(reply.body)}`);
  }
  const after = await services.api('GET', '/v1/sessions?limit=100', { token: alice.token });
  assert.is(after.status, 200);
  assert.not.ok(after.body.data.some((session: any) => session._id === id), JSON.stringify(after.body));
  await waitUntil('the purge round to remove its rows', async () => (await rowsOf('audio_seconds', id)) === 0 && (await rowsOf('sessions', id)) === 0, 30 * PURGE_WINDOW_SECONDS * 1000);

  // The other user's archived session, and its rows, as they were.
  const kept = await services.api('GET', `/v1/sessions/${other}`, { token: bob.token });
  assert.is(kept.status, 200);
  assert.is(kept.body.name, 'archived of bob');
  assert.is((await services.api('GET', features(other), { token: bob.token })).body.timeline.length, SECONDS / 10);
  assert.is(await rowsOf('audio_seconds', other), SECONDS);
  assert.is(await rowsOf('sessions', other), 1);
});

test('a session younger than the records\' age is never archived: without its record it does not exist', async () => {
  const { alice } = services.users;
  // In the index, with no record: what no aged-out session can be, as a week has not passed.
  const young = await archivedSession(alice.user, 'young', 1);
  for (const [method, path] of [['GET', `/v1/sessions/${young}`], ['GET', `/v1/sessions/${young}/audio/features`], ['DELETE', `/v1/sessions/${young}`]] as const) {
    const reply = await services.api(method, path, { token: alice.token });
    assert.is(reply.status, 404, `${method} ${path}: ${reply.status} ${JSON.stringify(reply.body)}`);
  }
  assert.is(await rowsOf('audio_seconds', young), SECONDS, 'nothing deleted');
});

test.run();

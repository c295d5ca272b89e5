// Deletes cost the same however many there are (storage/purge/purge-rounds.ts): one user's
// create-stop-delete loop adds a bounded number of mutations per table, counted in ClickHouse's
// own system.mutations; each deleted session answers 404 at once and its rows are gone after a
// purge round; another user's events, posted all through the loop, are all stored.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { readConfig } from '../../bus/config.ts';
import { startServices, type Services, type TestUser } from '../../ops/support/services.ts';
import { parsePrometheusText, total } from '../../ops/support/prometheus-text.ts';
import { waitUntil } from '../../ops/stack/process.ts';
import { clickHouseServer, connectClickHouse, queryRows, type ClickHouseClient } from '../../storage/clickhouse/clickhouse.ts';
import { literal } from '../../storage/clickhouse/sql.ts';
import { PurgeQueue } from '../../storage/purge/purge-queue.ts';
import { newSessionId } from '../../bus/ids.ts';
import { connect } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { httpRequest } from '../../ops/stack/http-client.ts';

const config = readConfig();
const CYCLES = 20;
// Cycles side by side: the loop takes less than a purge window, and a session whose last rows are
// still on their way waits one round more, so at most three rounds see it.
const LANES = 4;
const WINDOW_SECONDS = 20;
const MAX_MUTATIONS_PER_TABLE = 3;
// Every table a purge deletes from (storage/purge/purge.ts).
const PURGED_TABLES = ['audio_seconds', 'face_seconds', 'video_seconds', 'speech_segments', 'custom_events', 'event_spans', 'sessions'];
const EVENTS_PER_CYCLE = 50;

let services: Services;
let clickhouse: ClickHouseClient;

test.before(async () => {
  services = await startServices({ name: 'purge-rounds', env: { STREAM_UNREACHABLE_SECONDS: '900', PURGE_WINDOW_SECONDS: String(WINDOW_SECONDS) } });
  clickhouse = connectClickHouse(clickHouseServer(config), config.clickhouseDatabase);
});

test.after(async () => {
  await clickhouse?.close();
  await services?.stop();
});

const count = async (query: string) => Number((await queryRows<{ n: number }>(clickhouse, query))[0]?.n ?? 0);

async function mutationsByTable(): Promise<Map<string, number>> {
  const rows = await queryRows<{ table: string; n: number }>(clickhouse,
    'SELECT table, count() AS n FROM system.mutations WHERE database = currentDatabase() GROUP BY table');
  return new Map(rows.map((row) => [row.table, Number(row.n)]));
}

/** An active session of `user` with a scalar source, and a way to post events to it. */
async function sessionWithSource(user: TestUser, name: string): Promise<{ id: string; post: (times: number[]) => Promise<void> }> {
  const created = await services.api('POST', '/v1/sessions', { body: { name, streamUri: 'rtmp://127.0.0.1:9/live/x' }, token: user.token });
  assert.is(created.status, 201, JSON.stringify(created.body));
  const id = created.body._id as string;
  const source = await services.api('POST', `/v1/sessions/${id}/events`, { body: { name: 'pulse', format: 'scalar' }, token: user.token });
  assert.is(source.status, 201, JSON.stringify(source.body));
  const post = async (times: number[]) => {
    const reply = await services.api('POST', `/v1/sessions/${id}/events/${source.body.id}`, { body: times.map((time) => ({ time, data: time })), token: user.token });
    assert.is(reply.status, 201, JSON.stringify(reply.body));
  };
  return { id, post };
}

test(`${CYCLES} create-stop-delete cycles add at most ${MAX_MUTATIONS_PER_TABLE} mutations per table; their rows go; the other user's events are all stored`, async () => {
  const { alice, bob } = services.users;
  const bobs = await sessionWithSource(bob, 'kept');
  const before = await mutationsByTable();
  let bobPosted = 0;
  let looping = true;
  let bobFailure: unknown;
  const bobPosting = (async () => {
    while (looping) {
      await bobs.post([bobPosted]);
      bobPosted++;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  })().catch((error: unknown) => {
    bobFailure = error;
  });

  const deleted: string[] = [];
  const started = Date.now();
  const cycle = async (n: number) => {
    const { id, post } = await sessionWithSource(alice, `cycle ${n}`);
    await post(Array.from({ length: EVENTS_PER_CYCLE }, (_, i) => i));
    assert.is((await services.api('POST', `/v1/sessions/${id}/stop`, { token: alice.token })).status, 200);
    const removed = await services.api('DELETE', `/v1/sessions/${id}`, { token: alice.token });
    assert.is(removed.status, 204, JSON.stringify(removed.body));
    // Unreadable at once, the session and its results alike.
    assert.is((await services.api('GET', `/v1/sessions/${id}`, { token: alice.token })).status, 404);
    assert.is((await services.api('GET', `/v1/sessions/${id}/emotions/timeline`, { token: alice.token })).status, 404);
    assert.is((await services.api('GET', `/v1/sessions/${id}/events`, { token: alice.token })).status, 404);
    deleted.push(id);
  };
  const next = { n: 0 };
  try {
    await Promise.all(Array.from({ length: LANES }, async () => {
      while (next.n < CYCLES) await cycle(next.n++);
    }));
  } finally {
    // Bob stops posting however the loop ended, so a failure is reported, not a crash.
    looping = false;
    await bobPosting;
  }
  const loopSeconds = (Date.now() - started) / 1000;
  if (bobFailure) throw bobFailure;
  assert.is(deleted.length, CYCLES);

  const ids = `(${deleted.map(literal).join(', ')})`;
  const rowsLeft = async () => {
    let left = 0;
    for (const table of PURGED_TABLES) left += await count(`SELECT count() AS n FROM ${table} WHERE ${table === 'sessions' ? 'id' : 'session'} IN ${ids}`);
    return left;
  };
  await waitUntil('the deleted sessions\' rows gone', async () => (await rowsLeft()) === 0, (2 * WINDOW_SECONDS + 60) * 1000);
  // The round marks its sessions purged once their mutations are done: a moment after the rows go.
  const queued = async () => total(parsePrometheusText(await (await httpRequest(`${services.metrics.storage}/metrics`)).text), 'emo_purge_queue_sessions');
  await waitUntil('the queue drained', async () => (await queued()) === 0, 30_000);

  const after = await mutationsByTable();
  const added = PURGED_TABLES.map((table) => [table, (after.get(table) ?? 0) - (before.get(table) ?? 0)] as const);
  console.log(`${CYCLES} cycles in ${loopSeconds.toFixed(1)} s; mutations added per table: ${added.map(([table, n]) => `${table} ${n}`).join(', ')}`);
  for (const [table, n] of added) {
    assert.ok(n >= 1 && n <= MAX_MUTATIONS_PER_TABLE, `${table}: ${n} mutations for ${CYCLES} deletes`);
  }

  await services.rowsStored();
  assert.is(await count(`SELECT count() AS n FROM custom_events WHERE session = ${literal(bobs.id)}`), bobPosted, 'every event bob posted is stored');
  assert.is((await services.api('GET', `/v1/sessions/${bobs.id}`, { token: bob.token })).status, 200);
});

test('a session is queued once: asked again while queued, or once purged, it adds nothing', async () => {
  const nc = await connect({ servers: process.env.NATS_URL });
  try {
    const queue = await PurgeQueue.open(jetstream(nc), await jetstreamManager(nc), { replicas: 1, maxBytes: config.purgeQueueMaxBytes });
    // A session nobody created: a round that takes it deletes nothing.
    const session = { id: newSessionId(), createdAt: Date.now(), revision: 0 };
    assert.ok(await queue.add(session), 'queued');
    assert.not.ok(await queue.add(session), 'a retry while queued');
    const waiting = (await queue.oldest(1000)).filter((entry) => entry.session.id === session.id);
    assert.is(waiting.length, 1);
    await queue.purged(waiting);
    assert.not.ok(await queue.add(session), 'a resumed deletion after the purge');
    assert.not.ok((await queue.oldest(1000)).some((entry) => entry.session.id === session.id), 'not waiting');
    assert.ok(await queue.holds(session.id), 'gone, for every read');
  } finally {
    await nc.close();
  }
});

test('a session queued again while its round runs waits for the next round', async () => {
  const nc = await connect({ servers: process.env.NATS_URL });
  try {
    const queue = await PurgeQueue.open(jetstream(nc), await jetstreamManager(nc), { replicas: 1, maxBytes: config.purgeQueueMaxBytes });
    const session = { id: newSessionId(), createdAt: Date.now(), revision: 0 };
    assert.ok(await queue.add(session));
    const read = (await queue.oldest(1000)).filter((entry) => entry.session.id === session.id);
    // Rows of it landed after the round read the queue, and the index queued it again.
    await queue.again(session);
    await queue.purged(read);
    const next = (await queue.oldest(1000)).filter((entry) => entry.session.id === session.id);
    assert.is(next.length, 1, 'waiting for the next round');
    await queue.purged(next);
    assert.not.ok((await queue.oldest(1000)).some((entry) => entry.session.id === session.id), 'gone after it');
    // A session no deletion has queued yet is left to its deletion: queued now, its round could
    // come before the deletion's last rows are stored.
    const notYet = { id: newSessionId(), createdAt: Date.now() };
    await queue.again(notYet);
    assert.not.ok(await queue.holds(notYet.id), 'not queued by the index');
  } finally {
    await nc.close();
  }
});

test.run();

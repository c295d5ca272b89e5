// A purge round takes a deleted session only once its last rows are stored
// (storage/purge/purge-rounds.ts): the DELETE no longer waits for them. Real rounds against the
// lane's NATS and ClickHouse, with no writer running, so a row published onto ROWS stays on
// its way until the test takes it off.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { readConfig } from '../../bus/config.ts';
import { newSessionId } from '../../bus/ids.ts';
import { createLog } from '../../bus/log.ts';
import { streams, subjects } from '../../bus/subjects.ts';
import { waitUntil } from '../../ops/stack/process.ts';
import { queryRows, type ClickHouseClient } from '../../storage/clickhouse/clickhouse.ts';
import { literal } from '../../storage/clickhouse/sql.ts';
import { PurgeLease } from '../../storage/purge/purge-lease.ts';
import { PurgeQueue } from '../../storage/purge/purge-queue.ts';
import { PurgeRounds } from '../../storage/purge/purge-rounds.ts';
import { Schema } from '../../storage/schema/schema.ts';
import { columnsOf } from '../../storage/schema/tables.ts';
import { ensureRowsStream } from '../../storage/writer/rows-stream.ts';
import { migratedDatabase } from '../support/migrated.ts';

const config = readConfig();
const WINDOW_MS = 500;

let nc: NatsConnection;
let jsm: JetStreamManager;
let clickhouse: ClickHouseClient;

test.before(async () => {
  clickhouse = await migratedDatabase(config);
  nc = await connect({ servers: process.env.NATS_URL });
  jsm = await jetstreamManager(nc);
  await ensureRowsStream(jsm, { maxBytes: config.rowsStreamMaxBytes, replicas: 1 });
});

test.after(async () => {
  await nc?.close();
  await clickhouse?.close();
});

const audioRows = async (session: string) =>
  Number((await queryRows<{ n: number }>(clickhouse, `SELECT count() AS n FROM audio_seconds WHERE session = ${literal(session)}`))[0]?.n ?? 0);

test('a round leaves a session whose rows are on their way, or whose stop is too recent, and takes it once they are stored', async () => {
  const queue = await PurgeQueue.open(jetstream(nc), jsm, { replicas: 1, maxBytes: config.purgeQueueMaxBytes });
  const longAgo = Date.now() - 60_000;
  const settled = { id: newSessionId(), createdAt: longAgo - 60_000, finishedAt: longAgo };
  const onTheWay = { id: newSessionId(), createdAt: longAgo - 60_000, finishedAt: longAgo };
  const justStopped = { id: newSessionId(), createdAt: longAgo, finishedAt: Date.now() };
  const sessions = [settled, onTheWay, justStopped];
  // Stored rows of each; onTheWay has one more row still in ROWS, which no writer takes here.
  await clickhouse.insert({
    table: 'audio_seconds',
    values: sessions.map(({ id }) => columnsOf('audio', { session: id, second: 0, frequency: 0, intensity: -30, voiced: 0, speech: 0 })),
    format: 'JSONEachRow',
  });
  await jetstream(nc).publish(subjects.row(onTheWay.id, 'purge-round-waits', 'audio'), JSON.stringify([{ session: onTheWay.id, second: 1 }]));
  for (const session of sessions) assert.ok(await queue.add({ ...session, revision: 0 }));

  const log = createLog({ logLevel: 'silent', hostId: 'purge-round-waits' });
  const rounds = new PurgeRounds(queue, async () => 0, new PurgeLease(queue.kv, 'purge-round-waits'), jsm, clickhouse,
    new Schema(config.clickhouseDatabase), undefined, { windowMs: WINDOW_MS, batchSessions: 1000 }, log);
  const waiting = async (id: string) => (await queue.oldest(1000)).some((entry) => entry.session.id === id);
  rounds.start();
  try {
    await waitUntil('the settled session purged', async () => !(await waiting(settled.id)), 20_000);
    await waitUntil('the session stopped just now purged', async () => !(await waiting(justStopped.id)), 20_000);
    assert.ok(Date.now() - justStopped.finishedAt >= 2000, 'not before its worker had its two seconds to flush');
    // Rounds went on meanwhile; the session with a row on its way is still in the queue, its rows in place.
    await new Promise((resolve) => setTimeout(resolve, 4 * WINDOW_MS));
    assert.ok(await waiting(onTheWay.id), 'still waiting while its row is on its way');
    assert.is(await audioRows(onTheWay.id), 1);
    assert.is(await audioRows(settled.id), 0);

    // The writer stores the row and acknowledges it: the message leaves ROWS.
    await clickhouse.insert({ table: 'audio_seconds', values: [columnsOf('audio', { session: onTheWay.id, second: 1, frequency: 0, intensity: -30, voiced: 0, speech: 0 })], format: 'JSONEachRow' });
    await jsm.streams.purge(streams.rows, { filter: subjects.rowsOfSession(onTheWay.id) });
    await waitUntil('the session purged once its rows are stored', async () => !(await waiting(onTheWay.id)), 20_000);
    await waitUntil('its rows gone, the late one too', async () => (await audioRows(onTheWay.id)) === 0, 30_000);
  } finally {
    await rounds.stop();
  }
});

test.run();

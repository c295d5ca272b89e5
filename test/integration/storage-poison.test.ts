// Storage never stalls and never drops silently: rows that cannot be stored (unreadable, not
// matching their contract, refused by ClickHouse) go to the dead-letter stream while every good
// row around them lands; a full ROWS stream refuses new rows, publishers retry, nothing waiting
// is lost.
import { startStorageInProcess } from '../support/storage.ts';
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { RowPublisher } from '../../actors/rows.ts';
import { readConfig } from '../../bus/config.ts';
import { connectBus } from '../../bus/connection.ts';
import { newSessionId } from '../../bus/ids.ts';
import { createLog } from '../../bus/log.ts';
import { consumers, streams, subjects, tenantOf } from '../../bus/subjects.ts';
import { waitUntil } from '../../ops/stack/process.ts';
import { connectClickHouse, queryRows, type ClickHouseClient, clickHouseServer } from '../../storage/clickhouse/clickhouse.ts';
import { DEAD_ROW_HEADERS } from '../../storage/writer/dead-letter.ts';
import { ensureRowsStream } from '../../storage/writer/rows-stream.ts';
import { StorageService } from '../../storage/service.ts';
import { sql } from '../../storage/clickhouse/sql.ts';
import { storedTwice } from '../support/copies.ts';
import { audioRow } from '../support/audio-row.ts';

const config = readConfig();
const log = createLog(config);

const quiet = log.child({ component: 'storage-poison' });
quiet.level = 'silent';
// A database of its own: one column is narrowed below to make ClickHouse refuse some rows, and
// merges are stopped in its tables, so that a row stored twice is still there to be counted:
// rows are counted without FINAL (test/support/copies.ts).
const database = `poison_${process.pid}`;

let nc: NatsConnection;
let js: JetStreamClient;
let jsm: JetStreamManager;
let clickhouse: ClickHouseClient;
let storage: StorageService | undefined;

const startStorage = async () => (storage = await startStorageInProcess(config, `storage-poison-${process.pid}`, database, quiet));

async function stopStorage(): Promise<void> {
  await storage?.stop();
  storage = undefined;
}

const speech = (session: string, start: number, text: string) => ({
  session, start, end: start + 1, text, positive: 0.5, neutral: 0.5, negative: 0, compound: 0.3,
});
const count = async (query: string) => Number((await queryRows<{ n: number }>(clickhouse, query))[0]?.n ?? 0);
const MERGES_STOPPED = ['audio_seconds', 'speech_segments'];

async function deadRows(session: string): Promise<{ subject: string; reason: string; payload: string }[]> {
  const found: { subject: string; reason: string; payload: string }[] = [];
  const info = await jsm.streams.info(streams.deadRows);
  for (let seq = info.state.first_seq; seq <= info.state.last_seq && seq > 0; seq++) {
    const message = await jsm.streams.getMessage(streams.deadRows, { seq }).catch(() => undefined);
    const subject = message?.header.get(DEAD_ROW_HEADERS.subject) ?? '';
    if (!message || !subject.includes(session)) continue;
    found.push({ subject, reason: message.header.get(DEAD_ROW_HEADERS.reason) ?? '', payload: message.string() });
  }
  return found;
}

test.before(async () => {
  nc = await connectBus('storage-poison test', config.natsUrl, log);
  js = jetstream(nc);
  jsm = await jetstreamManager(nc);
  await startStorage();
  clickhouse = connectClickHouse(clickHouseServer(config), database);
  await clickhouse.command({ query: 'ALTER TABLE speech_segments MODIFY COLUMN text FixedString(8)' });
  for (const table of MERGES_STOPPED) await clickhouse.command({ query: `SYSTEM STOP MERGES ${database}.${table}` });
});

test.after(async () => {
  await storage?.stop();
  for (const table of MERGES_STOPPED) await clickhouse?.command({ query: `SYSTEM START MERGES ${database}.${table}` }).catch(() => {});
  await clickhouse?.command({ query: `DROP DATABASE IF EXISTS ${database}` }).catch(() => {});
  await clickhouse?.close();
  await nc?.drain();
});

test('poison rows are set aside with why; every good row lands once; the writer carries on', async () => {
  const session = newSessionId();
  const rows = new RowPublisher(js, quiet);
  for (let second = 0; second < 5; second++) rows.publish(session, 'audio', [audioRow(session, second)], second);
  rows.publish(session, 'audio', [{ ...audioRow(session, 99), second: 'x' }], 'wrong-type');
  rows.publish(session, 'speech', [speech(session, 1, 'bad \ud800')], 'surrogate');
  await js.publish(subjects.row(session, tenantOf({ product: 'tests', user: 'writer' }), 'audio'), 'not json {');
  await js.publish(`emo.rows.${session}.bogus`, JSON.stringify([audioRow(session, 98)]));
  // Both pass the contract; ClickHouse refuses the long one (FixedString(8)): the batch is split.
  rows.publish(session, 'speech', [speech(session, 2, 'short'), speech(session, 3, 'far too long for the column')], 'mixed');

  await waitUntil('good rows', async () =>
    (await count(sql`SELECT uniqExact(second) AS n FROM audio_seconds WHERE session = ${session}`)) === 5 &&
    (await count(sql`SELECT uniqExact(start_ms) AS n FROM speech_segments WHERE session = ${session}`)) === 1, 20_000);
  await waitUntil('dead rows', async () => (await deadRows(session)).length === 5, 10_000);
  const dead = await deadRows(session);
  const reasons = dead.map((row) => row.reason).join(' | ');
  assert.match(reasons, /not a audio row: \/second/);
  assert.match(reasons, /lone surrogate/);
  assert.match(reasons, /not JSON/);
  assert.match(reasons, /not a known kind of row/);
  assert.match(reasons, /ClickHouse refused it: Code: 131/);
  assert.ok(dead.some((row) => row.payload === 'not json {'), 'the unreadable message is kept byte for byte');
  assert.ok(dead.some((row) => row.payload.includes('far too long for the column')));

  // Later rows still land.
  rows.publish(session, 'audio', [audioRow(session, 5), audioRow(session, 6)], 'later');
  await waitUntil('later rows', async () => (await count(sql`SELECT uniqExact(second) AS n FROM audio_seconds WHERE session = ${session}`)) === 7, 20_000);
  await waitUntil('every row acknowledged', async () => {
    const { num_pending, num_ack_pending } = await jsm.consumers.info(streams.rows, consumers.writer);
    return num_pending === 0 && num_ack_pending === 0;
  }, 20_000);
  const seconds = await queryRows<{ second: number }>(clickhouse, sql`SELECT second FROM audio_seconds WHERE session = ${session} ORDER BY second`);
  assert.equal(seconds.map((row) => Number(row.second)), [0, 1, 2, 3, 4, 5, 6], 'each second stored once');
  assert.equal(await storedTwice(clickhouse, 'speech_segments', ['start_ms'], session), [], 'the good segment stored once');
});

test('a full ROWS stream refuses new rows, publishers are told and retry, nothing waiting is lost', async () => {
  await stopStorage();
  // A small stream, with no writer draining it.
  await jsm.streams.delete(streams.rows);
  await ensureRowsStream(jsm, { maxBytes: 64 * 1024, replicas: config.natsReplicas });
  const session = newSessionId();
  const rows = new RowPublisher(js, quiet);
  const total = 600; // about 100 KB of messages: more than the stream holds
  for (let second = 0; second < total; second++) {
    // One at a time until the stream refuses, then the rest handed to the publisher's retries.
    if (rows.refused) rows.publish(session, 'audio', [audioRow(session, second)], second);
    else await rows.publishDurably(session, 'audio', [audioRow(session, second)], second).catch(() => rows.publish(session, 'audio', [audioRow(session, second)], second));
  }
  await waitUntil('refusals', async () => rows.refused > 0, 20_000);
  const full = await jsm.streams.info(streams.rows);
  assert.ok(full.state.messages < total, 'the stream holds less than was published');

  // Publishers stop below the limit, so the server never removes a waiting row itself
  // (NATS 2.9 would, at the very edge, even under discard:new: actors/rows-room.ts).
  assert.is(full.state.first_seq, 1, 'no row removed by the server');
  assert.ok(full.state.bytes <= 64 * 1024, `${full.state.bytes} bytes stored`);
  // A writer drains the stream; the refused rows are retried and land too: every one of them.
  await startStorage();
  await waitUntil('every row', async () =>
    (await count(sql`SELECT uniqExact(second) AS n FROM audio_seconds WHERE session = ${session}`)) === total, 60_000);
  assert.is(rows.dropped, 0);
  assert.equal(await storedTwice(clickhouse, 'audio_seconds', ['second'], session), [], 'each row stored once');

  // Leave a stream of the usual size for the files after this one.
  await stopStorage();
  await jsm.streams.delete(streams.rows);
  await ensureRowsStream(jsm, { maxBytes: config.rowsStreamMaxBytes, replicas: config.natsReplicas });
  await startStorage();
});

test.run();

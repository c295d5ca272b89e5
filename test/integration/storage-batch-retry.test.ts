// A batch whose second table refuses inserts after its first table took its rows: the writer
// retries what is left, and the first table's rows are stored once, not once per attempt
// (plain MergeTree keeps every copy of an insert). The second table is detached while the
// batch is written, so its insert fails ("table doesn't exist", not an error about the data)
// with the first insert already committed. Counted without FINAL, merges stopped
// (test/support/copies.ts), on a database of the file's own.
import { Writable } from 'node:stream';
import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { pino } from 'pino';
import * as assert from 'uvu/assert';
import { RowPublisher } from '../../actors/rows.ts';
import { readConfig } from '../../bus/config.ts';
import { connectBus } from '../../bus/connection.ts';
import { newSessionId } from '../../bus/ids.ts';
import { createLog } from '../../bus/log.ts';
import { consumers, streams } from '../../bus/subjects.ts';
import { waitUntil } from '../../ops/stack/process.ts';
import { clickHouseServer, connectClickHouse, queryRows, type ClickHouseClient } from '../../storage/clickhouse/clickhouse.ts';
import type { StorageService } from '../../storage/service.ts';
import { sql } from '../../storage/clickhouse/sql.ts';
import { storedTwice } from '../support/copies.ts';
import { startStorageInProcess } from '../support/storage.ts';
import { test } from '../../ops/support/uvu.ts';
import { audioRow } from '../support/audio-row.ts';

const config = readConfig();
const quiet = createLog({ ...config, logLevel: 'silent' });
const database = `batch_retry_${process.pid}`;
const SECONDS = 10;
// Attempts the writer makes while the table is away: each one inserted the first table again.
const FAILED_ATTEMPTS = 3;

let nc: NatsConnection;
let jsm: JetStreamManager;
let clickhouse: ClickHouseClient;
let storage: StorageService | undefined;

/** The writer's warnings, kept to see its retries happen. */
const warnings: string[] = [];
const writerLog = pino({ level: 'warn' }, new Writable({
  write(chunk, _encoding, done) {
    warnings.push(String(chunk));
    done();
  },
}));
const retries = () => warnings.filter((line) => line.includes('inserting rows failed')).length;

const count = async (query: string) => Number((await queryRows<{ n: number }>(clickhouse, query))[0]?.n ?? 0);

test.before(async () => {
  nc = await connectBus('storage-batch-retry test', config.natsUrl, quiet);
  jsm = await jetstreamManager(nc);
  // Started once to create the schema, then stopped so that the rows wait in ROWS for one batch.
  await (await startStorageInProcess(config, `batch-retry-${process.pid}`, database, quiet)).stop();
  clickhouse = connectClickHouse(clickHouseServer(config), database);
  await clickhouse.command({ query: `SYSTEM STOP MERGES ${database}.audio_seconds` });
});

test.after(async () => {
  await storage?.stop();
  await clickhouse?.command({ query: `ATTACH TABLE ${database}.video_seconds` }).catch(() => {});
  await clickhouse?.command({ query: `DROP DATABASE IF EXISTS ${database}` }).catch(() => {});
  await clickhouse?.close();
  await nc?.drain();
});

test('a table that took its rows is not inserted again when a later table of the batch fails', async () => {
  const session = newSessionId();
  const rows = new RowPublisher(jetstream(nc), quiet);
  // Audio first: the batch inserts its tables in the order their rows came.
  for (let second = 0; second < SECONDS; second++) {
    await rows.publishDurably(session, 'audio', [audioRow(session, second)], second);
  }
  for (let second = 0; second < SECONDS; second++) {
    await rows.publishDurably(session, 'video', [{ session, second, frames: 4, faces: 1, dropped: 0 }], second);
  }
  await clickhouse.command({ query: `DETACH TABLE ${database}.video_seconds` });
  storage = await startStorageInProcess(config, `batch-retry-${process.pid}`, database, writerLog);

  // The fault lands mid-write: the audio is in while the video insert keeps failing.
  await waitUntil('the audio inserted', async () =>
    (await count(sql`SELECT count() AS n FROM audio_seconds WHERE session = ${session}`)) >= SECONDS, 20_000);
  await waitUntil('the writer to retry the batch', async () => retries() >= FAILED_ATTEMPTS, 20_000);
  assert.match(warnings.join(''), /video_seconds/, 'the video insert is what failed');
  await clickhouse.command({ query: `ATTACH TABLE ${database}.video_seconds` });

  await waitUntil('the video inserted', async () =>
    (await count(sql`SELECT uniqExact(second) AS n FROM video_seconds WHERE session = ${session}`)) === SECONDS, 20_000);
  await waitUntil('every row acknowledged', async () => {
    const { num_pending, num_ack_pending } = await jsm.consumers.info(streams.rows, consumers.writer);
    return num_pending === 0 && num_ack_pending === 0;
  }, 30_000);
  assert.is(await count(sql`SELECT uniqExact(second) AS n FROM audio_seconds WHERE session = ${session}`), SECONDS, 'every second stored');
  assert.equal(await storedTwice(clickhouse, 'audio_seconds', ['second'], session), [], 'each audio second stored once');
  assert.equal(await storedTwice(clickhouse, 'video_seconds', ['second'], session), [], 'each video second stored once');
});

test.run();

// A storage service killed (SIGKILL) while its INSERT is running in ClickHouse: after recovery
// every second is stored, and only once, or, where ClickHouse finished the insert the dead
// client had sent whole, the killed batch exactly twice (the redelivered batch is stored again)
// and nothing else twice. This file runs its own NATS and ClickHouse, the latter merging nothing,
// so that a second stored twice is still there to be counted (test/support/copies.ts).
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { readConfig } from '../../bus/config.ts';
import { connectBus } from '../../bus/connection.ts';
import { newSessionId } from '../../bus/ids.ts';
import { createLog } from '../../bus/log.ts';
import { consumers, streams, subjects, tenantOf } from '../../bus/subjects.ts';
import { startClickHouse } from '../../ops/stack/clickhouse.ts';
import { startNats } from '../../ops/stack/nats.ts';
import { freePort } from '../../ops/stack/ports.ts';
import { startService, waitUntil, type Service } from '../../ops/stack/process.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { launchService, serviceArgs } from '../../ops/stack/service-process.ts';
import { connectClickHouse, queryRows, type ClickHouseClient } from '../../storage/clickhouse/clickhouse.ts';
import { ensureRowsStream } from '../../storage/writer/rows-stream.ts';
import { sql } from '../../storage/clickhouse/sql.ts';
import { assertNoMerges, NO_MERGES } from '../support/copies.ts';
import { audioRow } from '../support/audio-row.ts';

const config = readConfig();
const log = createLog(config);
const dir = join(config.varDir, 'test', `storage-killed-mid-insert-${process.pid}`);

// One batch of MESSAGES messages of ROWS_EACH seconds each: an insert long enough to be caught running.
const MESSAGES = 400;
const ROWS_EACH = 250;
const KILLED = MESSAGES * ROWS_EACH;
const LATER = 100;

let nats: Service & { url: string };
let clickhouseServer: Service & { url: string };
let clickhouse: ClickHouseClient;
let nc: NatsConnection;
let js: JetStreamClient;
let jsm: JetStreamManager;
let storage: Service | undefined;
let passed = false;

const env = async (extra: Record<string, string>) => ({
  ...process.env,
  NATS_URL: nats.url,
  CLICKHOUSE_URL: clickhouseServer.url,
  HOST_ID: `storage-killed-mid-insert-${process.pid}`,
  METRICS_PORT: String(await freePort()),
  WRITER_BATCH_ROWS: String(MESSAGES),
  // ROWS, DEAD_ROWS and the buckets must fit this NATS's 1 GB of file store.
  SESSIONS_BUCKET_MAX_BYTES: String(64 * 1024 ** 2),
  ...extra,
});

test.before(async () => {
  nats = await startNats({ dir: join(dir, 'nats'), port: await freePort(), maxFileStore: '1GB' });
  clickhouseServer = await startClickHouse({ dir: join(dir, 'clickhouse'), httpPort: await freePort(), tcpPort: await freePort(), configFiles: NO_MERGES });
  clickhouse = connectClickHouse({ url: clickhouseServer.url, username: 'default', password: '' }, config.clickhouseDatabase);
  nc = await connectBus('storage-killed-mid-insert test', nats.url, log);
  js = jetstream(nc);
  jsm = await jetstreamManager(nc);
  await ensureRowsStream(jsm, { maxBytes: 512 * 1024 ** 2, replicas: 1 });
});

test.after(async () => {
  await storage?.stop();
  await nc?.close();
  await clickhouse?.close();
  await clickhouseServer?.stop();
  await nats?.stop();
  if (passed) rmSync(dir, { recursive: true, force: true });
});


async function publishSeconds(session: string, from: number, to: number, each: number): Promise<void> {
  for (let start = from; start < to; start += each) {
    const rows = Array.from({ length: Math.min(each, to - start) }, (_, i) => audioRow(session, start + i));
    await js.publish(subjects.row(session, tenantOf({ product: 'tests', user: 'writer' }), 'audio'), JSON.stringify(rows));
  }
}

/** How many seconds are stored once, twice, ...: [copies, seconds] pairs, counted without FINAL. */
const copiesOf = async (session: string, where = '1') => (await queryRows<{ copies: number; seconds: number }>(clickhouse,
  `SELECT copies, count() AS seconds FROM (SELECT count() AS copies FROM audio_seconds WHERE ${sql`session = ${session}`} AND ${where}
     GROUP BY second) GROUP BY copies ORDER BY copies`)).map((row): [number, number] => [Number(row.copies), Number(row.seconds)]);

test('a storage service killed during its INSERT: every second stored, twice only if the killed insert was finished', async () => {
  const session = newSessionId();
  await publishSeconds(session, 0, KILLED, ROWS_EACH);

  storage = startService('storage to be killed', process.execPath, await serviceArgs(config.projectRoot, 'storage'), {
    logFile: join(dir, 'killed.log'),
    env: await env({}),
    cwd: config.projectRoot,
  });
  // The writer's insert, caught running: the process is killed there, not between two steps.
  // Asked again as soon as ClickHouse answers: on a quiet machine the insert runs a few tenths
  // of a second, which a poll every 100 ms could miss.
  let seen = '';
  for (const deadline = Date.now() + 120_000; !seen && Date.now() < deadline;) {
    const [running] = await queryRows<{ query: string }>(clickhouse,
      "SELECT query FROM system.processes WHERE query LIKE 'INSERT%' AND query LIKE '%audio_seconds%'").catch(() => []);
    seen = running?.query ?? '';
    if (!seen) await sleep(5);
  }
  if (seen) process.kill(storage!.pid, 'SIGKILL');
  assert.match(seen, /^INSERT INTO .*audio_seconds/, 'killed while its insert ran');
  assert.is(await storage.exited, 'SIGKILL');
  // ClickHouse goes on with an insert whose client died once it has the whole body: what it
  // left is counted when it has ended (a count taken at once missed a block written after it).
  await waitUntil('the killed insert ended in ClickHouse', async () => (await queryRows(clickhouse,
    "SELECT query FROM system.processes WHERE query LIKE 'INSERT%' AND query LIKE '%audio_seconds%'")).length === 0, 60_000);
  await assertNoMerges(clickhouse);
  const left = await copiesOf(session);

  await publishSeconds(session, KILLED, KILLED + LATER, 10);
  storage = await launchService({
    id: `storage-killed-mid-insert-survivor-${process.pid}`, role: 'storage', projectRoot: config.projectRoot,
    logFile: join(dir, 'survivor.log'), env: await env({}), metricsPort: await freePort(),
  });
  await waitUntil('every row acknowledged', async () => {
    const { num_pending, num_ack_pending } = await jsm.consumers.info(streams.rows, consumers.writer);
    return num_pending === 0 && num_ack_pending === 0;
  }, 120_000);

  const killedBatch = await copiesOf(session, `second < ${KILLED}`);
  const summary = JSON.stringify({ leftByTheKilledInsert: left, killedBatch });
  if (left.length === 0) {
    // The insert died with its client: the redelivered batch is the only copy.
    assert.equal(killedBatch, [[1, KILLED]], `the killed batch stored once: ${summary}`);
  } else {
    // ClickHouse keeps the blocks of an insert it had written when its client died (a long
    // insert is written block by block: all, or a part of the batch), and the redelivered batch
    // stores every second again: the seconds the killed insert left are stored twice, exactly
    // those and only twice, the others once. The tables are ReplacingMergeTree by second, so a
    // merge (and every read, with FINAL) keeps one of each.
    // What was there at the kill may also hold batches stored and acknowledged before it, which
    // are not redelivered: the seconds stored twice are among those left, never more.
    const leftSeconds = left.reduce((sum, [copies, seconds]) => (copies === 1 ? sum + seconds : sum), 0);
    assert.equal(left.map(([copies]) => copies), [1], `the killed insert left each second at most once: ${summary}`);
    const twice = killedBatch.find(([copies]) => copies === 2)?.[1] ?? 0;
    assert.ok(killedBatch.every(([copies]) => copies === 1 || copies === 2), `no second stored more than twice: ${summary}`);
    assert.is(killedBatch.reduce((sum, [, seconds]) => sum + seconds, 0), KILLED, `every second of the batch stored: ${summary}`);
    assert.ok(twice <= leftSeconds, `only seconds already there at the kill stored twice: ${summary}`);
  }
  assert.equal(await copiesOf(session, `second >= ${KILLED}`), [[1, LATER]], 'the rows after it stored once');
  passed = true;
});

test.run();

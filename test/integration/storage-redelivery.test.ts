// A storage service lost between its insert and its acknowledgement (WRITER_EXIT_AFTER_INSERTS
// makes the process exit at that moment): the batch is redelivered to another writer after the
// consumer's ack_wait and stored again. Every acknowledged publish is stored; the second copy
// shows in the tables (merges stopped) for that batch's rows only, readers see each row once,
// and the spans the views keep count rows, not inserts (the session index's too, whose rows
// the index follower may store twice the same way).
import { startStorageInProcess } from '../support/storage.ts';
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { jetstream, jetstreamManager, type JetStreamClient } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { CustomEvent } from '../../bus/contracts/rows.ts';
import { readConfig } from '../../bus/config.ts';
import { connectBus } from '../../bus/connection.ts';
import { newSessionId } from '../../bus/ids.ts';
import { createLog } from '../../bus/log.ts';
import { subjects, tenantOf, type RowKind } from '../../bus/subjects.ts';
import { freePort } from '../../ops/stack/ports.ts';
import { startService, waitUntil, type Service } from '../../ops/stack/process.ts';
import { launchService, serviceArgs } from '../../ops/stack/service-process.ts';
import { connectClickHouse, queryRows, type ClickHouseClient, clickHouseServer } from '../../storage/clickhouse/clickhouse.ts';
import { ensureRowsStream } from '../../storage/writer/rows-stream.ts';
import { StorageService } from '../../storage/service.ts';
import type { SessionIndexRow } from '../../storage/sessions/sessions-index.ts';
import { sql } from '../../storage/clickhouse/sql.ts';
import { audioRow } from '../support/audio-row.ts';

const config = readConfig();
const log = createLog(config);
const quiet = log.child({ component: 'storage-redelivery' });
quiet.level = 'silent';
const database = `redelivery_${process.pid}`;
const logs = join(config.varDir, 'test', `storage-redelivery-${process.pid}`);

let nc: NatsConnection;
let js: JetStreamClient;
let clickhouse: ClickHouseClient;
let doomed: Service | undefined;
let storage: StorageService | undefined;

const TABLES = ['audio_seconds', 'custom_events', 'sessions'] as const;

test.before(async () => {
  nc = await connectBus('storage-redelivery test', config.natsUrl, log);
  js = jetstream(nc);
  await ensureRowsStream(await jetstreamManager(nc), { maxBytes: config.rowsStreamMaxBytes, replicas: config.natsReplicas });
  clickhouse = connectClickHouse(clickHouseServer(config), null);
  mkdirSync(logs, { recursive: true });
});

test.after(async () => {
  await doomed?.stop();
  await storage?.stop();
  for (const table of TABLES) await clickhouse.command({ query: `SYSTEM START MERGES ${database}.${table}` }).catch(() => {});
  await clickhouse?.command({ query: `DROP DATABASE IF EXISTS ${database}` }).catch(() => {});
  await clickhouse?.close();
  await nc?.drain();
});

const count = async (query: string) => Number((await queryRows<{ n: number }>(clickhouse, query))[0]?.n ?? 0);

const event = (session: string, user: string, n: number): CustomEvent => ({
  id: `e${n}`, session, source: 'sensor', user, type: 'sensor_report', time: n / 2, data: n,
});
const indexRow = (session: string, user: string, revision: number): SessionIndexRow => ({
  id: session, user, product: 'p', name: 'n', type: 'live', state: 'active',
  created_ms: 1_700_000_000_000, created: 1_700_000_000, revision, doc: '{}',
});

/** Publishes a message and waits for the stream's acknowledgement: from then on it must be stored. */
const publish = async (session: string, kind: RowKind, rows: unknown[]) =>
  void (await js.publish(subjects.row(session, tenantOf({ product: 'tests', user: 'writer' }), kind), JSON.stringify(rows)));

async function publishRange(session: string, user: string, from: number, to: number, revision: number): Promise<void> {
  for (let n = from; n < to; n++) {
    await publish(session, 'audio', [audioRow(session, n)]);
    await publish(session, 'event', [event(session, user, n)]);
  }
  // Twice, as a change redelivered after its insert is stored.
  const row = indexRow(session, user, revision);
  await clickhouse.insert({ table: `${database}.sessions`, values: [row, row], format: 'JSONEachRow' });
}

const storageEnv = { ...process.env, CLICKHOUSE_DATABASE: database, HOST_ID: `storage-redelivery-${process.pid}` };

test('a batch inserted and never acknowledged is stored again, collapses for readers and counts once in the spans', async () => {
  // Started without its writer to make the schema, so that merges can be stopped before any insert.
  doomed = await launchService({
    id: storageEnv.HOST_ID,
    role: 'storage',
    projectRoot: config.projectRoot,
    logFile: join(logs, 'schema.log'),
    env: { ...storageEnv, STORAGE_WRITER: 'false' },
    metricsPort: await freePort(),
  });
  await doomed.stop();
  for (const table of TABLES) await clickhouse.command({ query: `SYSTEM STOP MERGES ${database}.${table}` });

  // Two users, two sessions: both have rows in the batch that is lost, and rows after it.
  const [first, second] = [newSessionId(), newSessionId()];
  const batch = 20;
  const after = 30;
  await publishRange(first, 'alice', 0, batch, 1);
  await publishRange(second, 'bob', 0, batch, 1);

  // A storage process that exits right after its first insert: not waited on to be ready, as it
  // may insert and exit before it would be asked.
  doomed = startService('doomed storage', process.execPath, await serviceArgs(config.projectRoot, 'storage'), {
    logFile: join(logs, 'doomed.log'),
    env: { ...storageEnv, WRITER_EXIT_AFTER_INSERTS: '1' },
    cwd: config.projectRoot,
  });
  const code = await doomed.exited;
  assert.is(code, 70, 'it exited at the fault, after its first insert');
  const stored = await count(`SELECT count() AS n FROM ${database}.audio_seconds WHERE ${sql`session = ${first} OR session = ${second}`}`);
  assert.is(stored, 2 * batch, 'its insert was in before it died');

  await publishRange(first, 'alice', batch, after, 2);
  await publishRange(second, 'bob', batch, after, 2);
  storage = await startStorageInProcess(config, `storage-redelivery-survivor-${process.pid}`, database, quiet);

  for (const session of [first, second]) {
    const where = sql`session = ${session}`;
    // The lost batch comes back once its ack_wait has passed.
    await waitUntil('the redelivered batch', async () =>
      (await count(`SELECT count() AS n FROM ${database}.audio_seconds WHERE ${where} AND second < ${batch}`)) === 2 * batch, 60_000);
    await waitUntil('the later rows', async () =>
      (await count(`SELECT count() AS n FROM ${database}.custom_events WHERE ${where} AND time >= ${batch / 2}`)) === after - batch, 60_000);

    // Duplicates in the lost batch only, each stored twice; none after it.
    for (const table of ['audio_seconds', 'custom_events'] as const) {
      const copies = await queryRows<{ copies: number; rows: number }>(clickhouse,
        `SELECT copies, count() AS rows FROM (SELECT count() AS copies FROM ${database}.${table} WHERE ${where}
           GROUP BY ${table === 'audio_seconds' ? 'second' : 'time, id'}) GROUP BY copies ORDER BY copies`);
      assert.equal(copies.map((row) => [Number(row.copies), Number(row.rows)]), [[1, after - batch], [2, batch]], `${table} of ${session}`);
      assert.is(await count(`SELECT count() AS n FROM ${database}.${table} FINAL WHERE ${where}`), after, `${table} read once each`);
    }
    assert.is(await count(`SELECT count() AS n FROM ${database}.sessions FINAL WHERE id = ${sql`${session}`}`), 1);
    // The view of the events counts each event once, however often it was inserted.
    assert.is(await count(`SELECT uniqMerge(rows) AS n FROM ${database}.event_spans WHERE ${where}`), after, 'event_spans');
  }
  // One session per user, however many revisions and copies of its index rows.
  for (const user of ['alice', 'bob']) {
    assert.is(await count(`SELECT uniqMerge(rows) AS n FROM ${database}.session_spans WHERE user = ${sql`${user}`}`), 1, `session_spans of ${user}`);
  }
});

test.run();

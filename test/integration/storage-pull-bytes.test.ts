// A backlog of large event batches (each near the largest request body) is drained by a storage
// service whose batches are bounded in bytes (WRITER_PULL_MAX_BYTES): every batch it pulled
// held at most that many bytes (its own metrics say so), every event is stored once, and the
// process ran throughout. Without the bound the whole backlog would be one batch of 5,000
// messages' worth.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { jetstream, jetstreamManager, type JetStreamClient } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { readConfig } from '../../bus/config.ts';
import { connectBus } from '../../bus/connection.ts';
import { MAX_EVENTS_PER_REQUEST } from '../../bus/contracts/events.ts';
import type { CustomEvent } from '../../bus/contracts/rows.ts';
import { newSessionId } from '../../bus/ids.ts';
import { createLog } from '../../bus/log.ts';
import { consumers, streams, subjects, tenantOf } from '../../bus/subjects.ts';
import { freePort } from '../../ops/stack/ports.ts';
import { waitUntil, type Service } from '../../ops/stack/process.ts';
import { launchService } from '../../ops/stack/service-process.ts';
import { parsePrometheusText } from '../../ops/support/prometheus-text.ts';
import { clickHouseServer, connectClickHouse, queryRows, type ClickHouseClient } from '../../storage/clickhouse/clickhouse.ts';
import { ensureRowsStream } from '../../storage/writer/rows-stream.ts';
import { sql } from '../../storage/clickhouse/sql.ts';
import { httpRequest } from '../../ops/stack/http-client.ts';

const config = readConfig();
const log = createLog(config);
const database = `pull_bytes_${process.pid}`;
const logs = join(config.varDir, 'test', `storage-pull-bytes-${process.pid}`);

// Above the NATS server's max_payload (8 MB) plus the 4 KiB the writer requires, and well below
// the backlog: the bound must act several times.
const PULL_MAX_BYTES = 12 * 1024 * 1024;
const MESSAGES = 40;
// 1,000 text events of 1,000 characters: about 1.1 MiB a message, a request body's worth.
const TEXT = 'x'.repeat(1000);

let nc: NatsConnection;
let js: JetStreamClient;
let clickhouse: ClickHouseClient;
let storage: Service | undefined;

test.before(async () => {
  nc = await connectBus('storage-pull-bytes test', config.natsUrl, log);
  js = jetstream(nc);
  await ensureRowsStream(await jetstreamManager(nc), { maxBytes: config.rowsStreamMaxBytes, replicas: config.natsReplicas });
  clickhouse = connectClickHouse(clickHouseServer(config), null);
  mkdirSync(logs, { recursive: true });
});

test.after(async () => {
  await storage?.stop();
  await clickhouse?.command({ query: `DROP DATABASE IF EXISTS ${database}` }).catch(() => {});
  await clickhouse?.close();
  await nc?.drain();
});

const batchOf = (session: string, message: number): CustomEvent[] =>
  Array.from({ length: MAX_EVENTS_PER_REQUEST }, (_, n) => ({
    id: `m${message}-e${n}`,
    session,
    source: 'sensor',
    user: 'pull-bytes',
    type: 'sensor_report',
    time: message * MAX_EVENTS_PER_REQUEST + n,
    data: TEXT,
  }));

const metric = (text: string, name: string) => parsePrometheusText(text).find((sample) => sample.name === name)?.value ?? NaN;

test('a backlog of 1 MiB event batches is drained in batches bounded in bytes, each event stored once, the storage process running throughout', async () => {
  const session = newSessionId();
  let published = 0;
  for (let message = 0; message < MESSAGES; message++) {
    const payload = JSON.stringify(batchOf(session, message));
    published += payload.length;
    await js.publish(subjects.row(session, tenantOf({ product: 'tests', user: 'writer' }), 'event'), payload);
  }
  const pending = (await (await jetstreamManager(nc)).consumers.info(streams.rows, consumers.writer)).num_pending;
  assert.ok(pending >= MESSAGES, `the backlog waits for a writer (${pending} messages)`);

  const metricsPort = await freePort();
  storage = await launchService({
    id: `storage-pull-bytes-${process.pid}`,
    role: 'storage',
    projectRoot: config.projectRoot,
    logFile: join(logs, 'storage.log'),
    env: { ...process.env, CLICKHOUSE_DATABASE: database, WRITER_PULL_MAX_BYTES: String(PULL_MAX_BYTES) },
    metricsPort,
  });
  let exited: unknown;
  void storage.exited.then((code) => (exited = code));

  const events = MESSAGES * MAX_EVENTS_PER_REQUEST;
  const stored = async () =>
    Number((await queryRows<{ n: number }>(clickhouse, `SELECT count() AS n FROM ${database}.custom_events WHERE ${sql`session = ${session}`}`))[0]?.n ?? 0);
  await waitUntil('every event stored', async () => exited !== undefined || (await stored()) >= events, 120_000);
  assert.is(exited, undefined, 'the storage process never exited');

  const text = await (await httpRequest(`http://127.0.0.1:${metricsPort}/metrics`)).text;
  const largest = metric(text, 'emo_writer_largest_batch_bytes');
  const batches = metric(text, 'emo_writer_batches_pulled_total');
  const bytes = metric(text, 'emo_writer_pulled_bytes_total');
  const peakRss = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${storage.pid}/status`, 'utf8'))?.[1];
  console.log(`pulled ${(bytes / 2 ** 20).toFixed(1)} MiB in ${batches} batches, the largest ${(largest / 2 ** 20).toFixed(2)} MiB; storage peak RSS ${Math.round(Number(peakRss) / 1024)} MiB`);
  assert.ok(bytes >= published, `every message was pulled (${bytes} of ${published} bytes)`);
  assert.ok(largest > 0 && largest <= PULL_MAX_BYTES, `the largest batch, ${largest} bytes, is within ${PULL_MAX_BYTES}`);
  assert.ok(batches >= Math.ceil(published / PULL_MAX_BYTES), `${batches} batches for ${published} bytes`);

  // Each event once, counted without FINAL: a batch stored twice would show here.
  const copies = await queryRows<{ copies: number; ids: number }>(clickhouse,
    `SELECT copies, count() AS ids FROM (SELECT count() AS copies FROM ${database}.custom_events WHERE ${sql`session = ${session}`} GROUP BY id)
     GROUP BY copies`);
  assert.equal(copies.map((row) => [Number(row.copies), Number(row.ids)]), [[1, events]]);
  assert.is(exited, undefined, 'the storage process still runs');
});

test.run();

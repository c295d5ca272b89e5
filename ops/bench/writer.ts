// Storage writer throughput: audio rows published on the ROWS stream (as messages of 100 rows,
// then one row per message as the live path publishes), drained by StorageWriter into
// ClickHouse. Rows/s runs from the writer's start until every message is acknowledged (the
// work-queue stream is empty) and ClickHouse holds every row.
import type { ClickHouseClient } from '@clickhouse/client';
import { type AudioSecond, createLog, newSessionId, readConfig, streams } from '../../bus/index.ts';
import { RowPublisher } from '../../actors/index.ts';
import { ensureRowsStream, StorageWriter } from '../../storage/index.ts';
import { startBenchStack, type BenchStack } from './lib/stack.ts';
import { elapsedMs, fixed, printTable } from './lib/stats.ts';
import { setTimeout as sleep } from 'node:timers/promises';

const config = readConfig();
const log = createLog(config);

const TARGET_ROWS_PER_SECOND = 100_000;
const SESSIONS = 10;
const IN_FLIGHT = 2000;
const CASES = [
  { rows: 1_000_000, rowsPerMessage: 100 },
  { rows: 1_000_000, rowsPerMessage: 1 },
];

function audioRow(session: string, second: number): AudioSecond {
  const voiced = second % 3 !== 0;
  return {
    session,
    second,
    frequency: voiced ? 90 + (second % 170) + 0.25 : 0,
    intensity: -18 - (second % 37) - 0.5,
    voiced: voiced ? 0.75 : 0,
    speech: voiced ? 0.875 : 0.0625,
  };
}

/** Publishes `rows` audio rows spread over the sessions, each acknowledged by the stream. */
async function publishRows(publisher: RowPublisher, rows: number, rowsPerMessage: number): Promise<number> {
  const sessions = Array.from({ length: SESSIONS }, () => newSessionId());
  const perSession = rows / SESSIONS;
  const inFlight = new Set<Promise<void>>();
  const started = performance.now();
  for (const session of sessions) {
    for (let first = 0; first < perSession; first += rowsPerMessage) {
      const batch = Array.from({ length: Math.min(rowsPerMessage, perSession - first) }, (_, i) => audioRow(session, first + i));
      const sent = publisher.publishDurably(session, 'audio', batch, `${first}+${batch.length}`);
      inFlight.add(sent);
      void sent.finally(() => inFlight.delete(sent));
      if (inFlight.size >= IN_FLIGHT) await Promise.race(inFlight);
    }
  }
  await Promise.all(inFlight);
  return elapsedMs(started) / 1000;
}

async function streamMessages(stack: BenchStack): Promise<number> {
  return (await stack.nats!.jsm.streams.info(streams.rows)).state.messages;
}

async function storedRows(stack: BenchStack): Promise<number> {
  const result = await stack.clickhouse.query({ query: 'SELECT count() AS rows FROM audio_seconds', format: 'JSONEachRow' });
  return Number((await result.json<{ rows: number }>())[0]!.rows);
}

/** The client, counting the wall time its inserts take: the rest of the drain is NATS and the writer's own work. */
function timingInserts(client: ClickHouseClient): { client: ClickHouseClient; insertSeconds: () => number; inserts: () => number } {
  let seconds = 0;
  let count = 0;
  const timed = new Proxy(client, {
    get(target, property, receiver) {
      if (property !== 'insert') return Reflect.get(target, property, receiver);
      return async (...args: Parameters<ClickHouseClient['insert']>) => {
        const started = performance.now();
        try {
          return await target.insert(...args);
        } finally {
          seconds += elapsedMs(started) / 1000;
          count++;
        }
      };
    },
  });
  return { client: timed, insertSeconds: () => seconds, inserts: () => count };
}

async function runCase(stack: BenchStack, rows: number, rowsPerMessage: number) {
  const { js } = stack.nats!;
  await stack.clickhouse.command({ query: 'TRUNCATE TABLE audio_seconds' });
  const publishSeconds = await publishRows(new RowPublisher(js, log), rows, rowsPerMessage);
  const messages = await streamMessages(stack);
  const clickhouse = timingInserts(stack.clickhouse);
  const writer = new StorageWriter(js, clickhouse.client, log, {
    batchRows: config.writerBatchRows,
    pullMaxBytes: config.writerPullMaxBytes,
    largestMessageBytes: stack.nats!.nc.info?.max_payload ?? 0,
    flushMs: config.writerFlushMs,
  });
  const cpu = process.cpuUsage();
  const started = performance.now();
  await writer.start();
  while (writer.rowsWritten < rows) await sleep(20);
  while ((await streamMessages(stack)) > 0) await sleep(20);
  const drainSeconds = elapsedMs(started) / 1000;
  const used = process.cpuUsage(cpu);
  await writer.stop();
  const stored = await storedRows(stack);
  if (stored !== rows) throw new Error(`ClickHouse holds ${stored} rows, expected ${rows}`);
  return {
    rows,
    rowsPerMessage,
    messages,
    publishSeconds,
    drainSeconds,
    inserts: clickhouse.inserts(),
    insertSeconds: clickhouse.insertSeconds(),
    writerCpuSeconds: (used.user + used.system) / 1e6,
  };
}

const stack = await startBenchStack('writer', true);
try {
  await ensureRowsStream(stack.nats!.jsm, { maxBytes: config.rowsStreamMaxBytes, replicas: config.natsReplicas });
  const results = [];
  for (const { rows, rowsPerMessage } of CASES) {
    results.push(await runCase(stack, rows, rowsPerMessage));
    console.log(`  ${rowsPerMessage} row(s) per message: done`);
  }
  printTable(
    `Storage writer: audio rows from the ROWS stream into ClickHouse (writer batch ${config.writerBatchRows} messages, flush ${config.writerFlushMs} ms)`,
    ['rows', 'rows/message', 'messages', 'publish msg/s', 'drain s', 'rows/s', `target >= ${TARGET_ROWS_PER_SECOND / 1000}k rows/s`, 'inserts', 'in inserts s', 'writer process CPU s'],
    results.map((r) => {
      const rate = r.rows / r.drainSeconds;
      return [
        String(r.rows),
        String(r.rowsPerMessage),
        String(r.messages),
        fixed(r.messages / r.publishSeconds, 0),
        fixed(r.drainSeconds, 2),
        fixed(rate, 0),
        rate >= TARGET_ROWS_PER_SECOND ? 'met' : `missed (${fixed((100 * rate) / TARGET_ROWS_PER_SECOND, 0)} % of it)`,
        String(r.inserts),
        fixed(r.insertSeconds, 2),
        fixed(r.writerCpuSeconds, 1),
      ];
    }),
  );
} finally {
  await stack.stop();
}

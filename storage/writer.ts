// The storage writer: drains the ROWS stream into ClickHouse in batches (by size, or every
// flush interval, whichever comes first) and acknowledges a message only after its rows are in.
// While ClickHouse is down the batch is retried and the stream keeps everything behind it.
// Several writers may share the durable consumer; a redelivered batch is deduplicated by the
// tables' ReplacingMergeTree keys.
import type { ClickHouseClient } from '@clickhouse/client';
import type { Consumer, JsMsg, JetStreamClient } from '@nats-io/jetstream';
import { setTimeout as sleep } from 'node:timers/promises';
import { config } from '../bus/config.ts';
import type { Logger } from '../bus/log.ts';
import { consumers, ROW_KINDS, streams, type RowKind } from '../bus/subjects.ts';
import { columnsOf, tableOf } from './tables.ts';

export interface WriterOptions {
  batchRows?: number;
  flushMs?: number;
}

export class StorageWriter {
  private running = false;
  private waiting: JsMsg[] = [];
  private loop?: Promise<void>;
  private readonly batchRows: number;
  private readonly flushMs: number;
  rowsWritten = 0;

  constructor(
    private readonly js: JetStreamClient,
    private readonly clickhouse: ClickHouseClient,
    private readonly log: Logger,
    options: WriterOptions = {},
  ) {
    this.batchRows = options.batchRows ?? config.writerBatchRows;
    this.flushMs = options.flushMs ?? config.writerFlushMs;
  }

  async start(): Promise<void> {
    const consumer = await this.js.consumers.get(streams.rows, consumers.writer);
    this.running = true;
    this.loop = this.run(consumer);
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }

  /**
   * The next batch is fetched while the previous one is being inserted, with at most one
   * insert in flight; a batch waiting for its turn is kept alive while the insert retries.
   */
  private async run(consumer: Consumer): Promise<void> {
    let inserting: Promise<void> = Promise.resolve();
    while (this.running) {
      let batch: JsMsg[] = [];
      try {
        batch = await this.fetch(consumer);
      } catch (error) {
        this.log.warn({ err: error }, 'fetching rows failed; retrying');
        await sleep(500);
        continue;
      }
      this.waiting = batch;
      await inserting;
      this.waiting = [];
      if (batch.length) inserting = this.write(batch);
    }
    await inserting;
  }

  /**
   * One pull: ends when the batch is full or the pull expires. Everything the server delivered
   * is kept: a message dropped here would wait for its redelivery, a full ack_wait later.
   */
  private async fetch(consumer: Consumer): Promise<JsMsg[]> {
    const messages = await consumer.fetch({ max_messages: this.batchRows, expires: Math.max(this.flushMs, 1000) });
    const batch: JsMsg[] = [];
    try {
      for await (const message of messages) batch.push(message);
    } catch (error) {
      // A pull can end early (missed heartbeats on a busy process); what it delivered is kept.
      if (!batch.length) throw error;
      this.log.warn({ err: error, rows: batch.length }, 'pull ended early; writing what arrived');
    }
    return batch;
  }

  /** Inserts the batch, retrying with backoff until it is in, then acknowledges it. */
  private async write(batch: JsMsg[]): Promise<void> {
    const tables = groupByTable(batch, this.log);
    for (let attempt = 0; ; attempt++) {
      try {
        for (const [table, values] of tables) {
          await this.clickhouse.insert({ table, values, format: 'JSONEachRow' });
        }
        break;
      } catch (error) {
        if (!this.running && attempt > 0) return; // unacked: redelivered to the next writer
        this.log.warn({ err: error, attempt, rows: batch.length }, 'inserting rows failed; retrying');
        for (const message of [...batch, ...this.waiting]) message.working();
        await sleep(Math.min(250 * 2 ** attempt, 5000));
      }
    }
    for (const message of batch) message.ack();
    this.rowsWritten += [...tables.values()].reduce((sum, values) => sum + values.length, 0);
  }
}

function groupByTable(batch: JsMsg[], log: Logger): Map<string, Record<string, unknown>[]> {
  const tables = new Map<string, Record<string, unknown>[]>();
  for (const message of batch) {
    const kind = message.subject.slice(message.subject.lastIndexOf('.') + 1) as RowKind;
    if (!ROW_KINDS.includes(kind)) {
      log.error({ subject: message.subject }, 'row of unknown kind; dropped');
      continue;
    }
    let rows: unknown[];
    try {
      const parsed = message.json<unknown>();
      rows = Array.isArray(parsed) ? parsed : [parsed];
    } catch {
      log.error({ subject: message.subject }, 'row message is not JSON; dropped');
      continue;
    }
    const table = tableOf(kind);
    const values = tables.get(table) ?? [];
    for (const row of rows) values.push(columnsOf(kind, row));
    tables.set(table, values);
  }
  return tables;
}

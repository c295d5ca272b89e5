// The storage writer: drains the ROWS stream into ClickHouse in batches (by size, or every
// flush interval, whichever comes first) and acknowledges a message only after its rows are in.
// While ClickHouse is down the batch is retried and the stream keeps everything behind it; a
// row that can never be stored is set aside in the dead-letter stream, so it stops nothing.
// Several writers may share the durable consumer. A batch redelivered after its insert (a writer
// lost before its ack) is stored twice and collapses for readers: the tables are
// ReplacingMergeTree by each row's key and read with FINAL, and the views' spans count distinct
// keys (storage/schema/migrations.ts).
import type { ClickHouseClient } from '@clickhouse/client';
import type { Consumer, JsMsg, JetStreamClient } from '@nats-io/jetstream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SessionRecord } from '../../bus/contracts/session.ts';
import type { Logger } from '../../bus/log.ts';
import { consumers, rowHeaders, streams } from '../../bus/subjects.ts';
import { AckedLately } from './acked-lately.ts';
import { storeDeadRows, type DeadRow } from './dead-letter.ts';
import { epochOf, fenced } from './fence.ts';
import { isDataError, isUnknownStatus } from '../clickhouse/insert-errors.ts';
import { isRowKind, rowProblem } from './row-check.ts';
import { columnsOf, tableOf, type Columns } from '../schema/tables.ts';

export interface WriterOptions {
  /** Whether a session has been deleted: its late rows are dropped, not stored again. */
  deleted?: (session: string) => boolean;
  /** The session's record as this process knows it: a stale owner's rows are refused by it (fence.ts). */
  record?: (session: string) => SessionRecord | undefined;
  /** Messages per insert at most, rounded up to a whole pull (the client pulls at most 100 by bytes). */
  batchRows: number;
  /**
   * Bytes of messages a batch holds at most (WRITER_PULL_MAX_BYTES): a backlog of large
   * messages (1 MiB event batches) must not be pulled 5,000 at a time into memory.
   */
  pullMaxBytes: number;
  /** The largest message the NATS server takes (its max_payload): every pull must have room for one. */
  largestMessageBytes: number;
  /** How long rows may wait for a fuller batch. */
  flushMs: number;
  /** Called after a batch is inserted, before it is acknowledged: where a test makes the process die. */
  inserted?: () => void;
}

export class StorageWriter {
  private running = false;
  private waiting: JsMsg[] = [];
  private loop?: Promise<void>;
  private readonly batchRows: number;
  private readonly pullMaxBytes: number;
  private readonly largestMessageBytes: number;
  private readonly flushMs: number;
  private readonly deleted?: (session: string) => boolean;
  private readonly record: (session: string) => SessionRecord | undefined;
  private readonly ackedLately = new AckedLately();
  private readonly inserted?: () => void;
  rowsWritten = 0;
  /** Messages dropped because their session had been deleted, since start. */
  lateRowsDropped = 0;
  /** Rows of a stale owner refused (fence.ts), since start. */
  rowsFenced = 0;
  /** Rows set aside in the dead-letter stream, since start. */
  deadLetters = 0;
  /**
   * Rows inserted from messages delivered before (to this writer or another) that this writer
   * had not acknowledged, since start: each may be a second copy of a row (see the header).
   */
  rowsRedelivered = 0;
  /**
   * Rows of inserts ClickHouse answered "unknown status" (retried): where a replica may hold a
   * second copy for up to five minutes, in a part ZooKeeper does not know.
   */
  rowsOfUnknownStatus = 0;
  /** Batches pulled, their bytes in all, and the largest one, since start (the process's metrics). */
  batchesPulled = 0;
  bytesPulled = 0;
  largestBatchBytes = 0;

  constructor(
    private readonly js: JetStreamClient,
    private readonly clickhouse: ClickHouseClient,
    private readonly log: Logger,
    options: WriterOptions,
  ) {
    // A message that cannot fit in a pull would never be delivered: the server ends such a pull
    // without it, every time (409 "Message Size Exceeds MaxBytes").
    if (options.pullMaxBytes < options.largestMessageBytes + MESSAGE_OVERHEAD_BYTES) {
      throw new Error(
        `WRITER_PULL_MAX_BYTES (${options.pullMaxBytes}) must be at least the NATS server's max_payload plus ${MESSAGE_OVERHEAD_BYTES} bytes (${options.largestMessageBytes + MESSAGE_OVERHEAD_BYTES})`,
      );
    }
    this.batchRows = options.batchRows;
    this.pullMaxBytes = options.pullMaxBytes;
    this.largestMessageBytes = options.largestMessageBytes + MESSAGE_OVERHEAD_BYTES;
    this.flushMs = options.flushMs;
    this.deleted = options.deleted;
    this.record = options.record ?? (() => undefined);
    this.inserted = options.inserted;
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
   * One batch: pulls bounded in bytes, while the backlog lasts, until the batch holds
   * `batchRows` messages, has no room left for the largest message, or has waited its flush
   * interval. Everything the server delivered is kept: a message dropped here would wait for its
   * redelivery, a full ack_wait later.
   */
  private async fetch(consumer: Consumer): Promise<JsMsg[]> {
    const batch: JsMsg[] = [];
    let bytes = 0;
    const started = Date.now();
    for (;;) {
      const expires = Math.max(1000, this.flushMs - (Date.now() - started));
      const pull = await this.pull(consumer, this.pullMaxBytes - bytes, expires, batch.length > 0);
      batch.push(...pull.messages);
      bytes += pull.bytes;
      const roomLeft = this.pullMaxBytes - bytes >= this.largestMessageBytes;
      if (!pull.full || !roomLeft || batch.length >= this.batchRows || Date.now() - started >= this.flushMs) break;
    }
    if (batch.length) {
      this.batchesPulled++;
      this.bytesPulled += bytes;
      this.largestBatchBytes = Math.max(this.largestBatchBytes, bytes);
    }
    return batch;
  }

  /**
   * One pull of at most `maxBytes` (and, the client's rule for a pull by bytes, 100 messages).
   * `full`: it ended on a bound rather than on its expiry, so more may be waiting.
   */
  private async pull(
    consumer: Consumer,
    maxBytes: number,
    expires: number,
    holding: boolean,
  ): Promise<{ messages: JsMsg[]; bytes: number; full: boolean }> {
    const messages: JsMsg[] = [];
    let bytes = 0;
    let full = false;
    try {
      const iterator = await consumer.fetch({ max_bytes: maxBytes, expires });
      for await (const message of iterator) {
        messages.push(message);
        bytes += sizeOf(message);
      }
      full = messages.length >= PULL_MESSAGES;
    } catch (error) {
      // The server ends a pull whose next message does not fit with 409: the pull is full.
      if (isFullByBytes(error)) return { messages, bytes, full: true };
      // A pull can end early (missed heartbeats on a busy process); what it delivered is kept.
      if (!messages.length && !holding) throw error;
      this.log.warn({ err: error, messages: messages.length }, 'pull ended early; writing what arrived');
    }
    return { messages, bytes, full };
  }

  /**
   * Inserts the batch, retrying with backoff while ClickHouse cannot take anything, then
   * acknowledges it. Rows that cannot be stored (unreadable, not matching their contract, or
   * refused by ClickHouse for their data) go to the dead-letter stream instead; every other
   * row of the batch is written. A retry does only what is left: a table's rows that are in
   * are not inserted again (plain MergeTree keeps every copy), nor a dead row the dead-letter
   * stream took published again. A message is acknowledged only once each of its rows is in
   * ClickHouse or in the dead-letter stream.
   */
  private async write(pulled: JsMsg[]): Promise<void> {
    // Stored before: acknowledged again, not inserted again (acked-lately.ts).
    const again = pulled.filter((message) => this.ackedLately.has(storedAs(message)));
    for (const message of again) message.ack();
    if (again.length) this.log.info({ messages: again.length }, 'messages already stored acknowledged again');
    const batch = again.length ? pulled.filter((message) => !again.includes(message)) : pulled;
    const late = this.deleted ? batch.filter((message) => this.deleted!(sessionOf(message.subject))) : [];
    const { tables, dead, fenced } = sortRows(late.length ? batch.filter((message) => !late.includes(message)) : batch, this.record);
    if (fenced) {
      this.rowsFenced += fenced;
      this.log.warn({ rows: fenced, total: this.rowsFenced }, 'rows of a stale owner refused: their session was taken over');
    }
    if (late.length) {
      this.lateRowsDropped += late.length;
      this.log.info({ messages: late.length }, 'rows of deleted sessions dropped');
    }
    const setAside = new Set<DeadRow>();
    const refused = () => [...tables.values()].flat().flatMap((entry) => entry.refused ?? []);
    for (let attempt = 0; ; attempt++) {
      try {
        for (const [table, entries] of tables) await this.insertIsolating(table, entries);
        const left = [...dead, ...refused()].filter((row) => !setAside.has(row));
        await storeDeadRows(this.js, left, (row) => setAside.add(row));
        break;
      } catch (error) {
        if (!this.running && attempt > 0) {
          // What is done is acknowledged; the rest is redelivered to the next writer.
          for (const message of settledMessages(batch, tables, dead, setAside)) this.ack(message);
          return;
        }
        this.log.warn({ err: error, attempt, rows: batch.length }, 'inserting rows failed; retrying what is left');
        for (const message of [...batch, ...this.waiting]) message.working();
        await sleep(Math.min(250 * 2 ** attempt, 5000));
      }
    }
    this.inserted?.();
    this.countRedelivered(tables);
    for (const message of batch) this.ack(message);
    const deadRows = [...dead, ...refused()];
    const written = [...tables.values()].reduce((sum, entries) => sum + entries.length, 0) - (deadRows.length - dead.length);
    this.rowsWritten += written;
    if (deadRows.length) {
      this.deadLetters += deadRows.length;
      const reasons = [...new Set(deadRows.map((row) => row.reason))].slice(0, 3);
      this.log.error({ deadRows: deadRows.length, reasons, total: this.deadLetters }, 'rows set aside in the dead-letter stream');
    }
  }

  /**
   * Counts and logs, by table, session and key, the rows just inserted from redelivered
   * messages: where a second copy may lie, for an operator and for the tests that count copies.
   */
  private countRedelivered(tables: Map<string, Entry[]>): void {
    const again = [...tables].flatMap(([table, entries]) =>
      entries.filter((entry) => entry.inserted && entry.message.redelivered).map((entry) => ({ table, session: entry.columns.session, second: entry.columns.second })));
    if (again.length === 0) return;
    this.rowsRedelivered += again.length;
    this.log.warn({ redeliveredRows: again, total: this.rowsRedelivered }, 'rows of redelivered messages inserted: another writer may have stored them before');
  }

  /** Logs, by table, session and key, the rows of an insert whose status ClickHouse could not tell. */
  private countUnknownStatus(table: string, entries: Entry[]): void {
    this.rowsOfUnknownStatus += entries.length;
    const rows = entries.map((entry) => ({ session: entry.columns.session, second: entry.columns.second }));
    this.log.warn({ table, unknownStatusRows: rows, total: this.rowsOfUnknownStatus },
      'insert of unknown status, retried: if ZooKeeper never registered it, one replica keeps a second copy for up to five minutes');
  }

  private ack(message: JsMsg): void {
    this.ackedLately.add(storedAs(message));
    message.ack();
  }

  /**
   * Inserts the entries not yet settled; a batch ClickHouse refuses for its data is halved until
   * the bad rows stand alone. A retry sends the same blocks as the attempt before it, skipping
   * those that went in: a Distributed table's shard that took a block before another shard
   * failed drops the identical block sent again (replicated tables deduplicate inserts by hash).
   */
  private async insertIsolating(table: string, entries: Entry[]): Promise<void> {
    if (entries.every(isSettled)) return;
    // Some of these settled: this block was refused for its data before and split.
    const splitBefore = entries.some(isSettled);
    if (!splitBefore) {
      try {
        await this.clickhouse.insert({ table, values: entries.map((entry) => entry.columns), format: 'JSONEachRow' });
        for (const entry of entries) entry.inserted = true;
        return;
      } catch (error) {
        if (isUnknownStatus(error)) this.countUnknownStatus(table, entries);
        if (!isDataError(error)) throw error;
        if (entries.length === 1) {
          const reason = `ClickHouse refused it: ${(error as Error).message.split('\n')[0]}`;
          entries[0]!.refused = { ...entries[0]!.origin, reason };
          return;
        }
      }
    }
    const half = Math.ceil(entries.length / 2);
    await this.insertIsolating(table, entries.slice(0, half));
    await this.insertIsolating(table, entries.slice(half));
  }
}

interface Entry {
  columns: Columns;
  /** Where the row came from, to set it aside with. */
  origin: Omit<DeadRow, 'reason'>;
  message: JsMsg;
  /** ClickHouse has it. */
  inserted?: boolean;
  /** ClickHouse refused it for its data: to be set aside, so. */
  refused?: DeadRow;
}

const isSettled = (entry: Entry) => entry.inserted === true || entry.refused !== undefined;

/** The messages of the batch whose every row is in ClickHouse or in the dead-letter stream. */
function settledMessages(batch: JsMsg[], tables: Map<string, Entry[]>, dead: Unstorable[], setAside: Set<DeadRow>): JsMsg[] {
  const unsettled = new Set<JsMsg>();
  for (const entry of [...tables.values()].flat()) {
    if (!entry.inserted && !(entry.refused && setAside.has(entry.refused))) unsettled.add(entry.message);
  }
  for (const row of dead) if (!setAside.has(row)) unsettled.add(row.message);
  return batch.filter((message) => !unsettled.has(message));
}

/** What the client library pulls at most when a pull is bounded by bytes. */
const PULL_MESSAGES = 100;
/** Room for a message's subject, reply subject and headers beside its payload, as the server counts it. */
const MESSAGE_OVERHEAD_BYTES = 4096;

/** A message's size as the server counts it against a pull's bytes, less its reply subject. */
const sizeOf = (message: JsMsg) => message.data.length + message.subject.length + (message.headers?.toString().length ?? 0);

// The package exports the class only from its internal entry point: recognised by name and code.
const isFullByBytes = (error: unknown) =>
  error instanceof Error && error.name === 'JetStreamStatusError' && (error as { code?: unknown }).code === 409 &&
  /exceeds maxbytes/i.test(error.message);

/** The session of a row message: emo.rows.<session>.<product>.<user>.<kind>, or emo.rows.<session>.<kind> from before tenants. */
const sessionOf = (subject: string) => subject.split('.')[2] ?? '';

/** A row of the batch that cannot be stored, with the message it came in. */
type Unstorable = DeadRow & { message: JsMsg };

/**
 * The batch's storable rows by table, what cannot be stored with why, and how many rows a stale
 * owner made (fence.ts): those are dropped.
 */
function sortRows(
  batch: JsMsg[],
  recordOf: (session: string) => SessionRecord | undefined,
): { tables: Map<string, Entry[]>; dead: Unstorable[]; fenced: number } {
  const tables = new Map<string, Entry[]>();
  const dead: Unstorable[] = [];
  let refused = 0;
  for (const message of batch) {
    const { subject } = message;
    // The stream sequence names the row in DEAD_ROWS: the same row set aside again (a batch
    // redelivered to another writer) is taken once.
    const id = String(message.seq);
    const kind = subject.slice(subject.lastIndexOf('.') + 1);
    if (!isRowKind(kind)) {
      dead.push({ id, kind: 'unknown', subject, payload: message.data, reason: 'not a known kind of row', message });
      continue;
    }
    let rows: unknown[];
    try {
      const parsed = message.json<unknown>();
      rows = Array.isArray(parsed) ? parsed : [parsed];
    } catch {
      dead.push({ id, kind, subject, payload: message.data, reason: 'not JSON', message });
      continue;
    }
    const table = tableOf(kind);
    const entries = tables.get(table) ?? [];
    const epoch = epochOf(message.headers?.get(rowHeaders.ownerEpoch) || undefined);
    const record = epoch === undefined ? undefined : recordOf(sessionOf(subject));
    rows.forEach((row, index) => {
      if (fenced(record, epoch, kind, row)) {
        refused++;
        return;
      }
      const origin = { id: `${id}.${index}`, kind, subject, payload: JSON.stringify(row) };
      const problem = rowProblem(kind, row);
      if (problem) dead.push({ ...origin, reason: problem, message });
      else entries.push({ columns: columnsOf(kind, row), origin, message });
    });
    if (entries.length) tables.set(table, entries);
  }
  return { tables, dead, fenced: refused };
}

/** What a message is remembered by once stored: its publisher's message id, else its sequence. */
function storedAs(message: JsMsg): string {
  return message.headers?.get('Nats-Msg-Id') || `#${message.seq}`;
}

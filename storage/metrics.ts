// The storage service's metrics, on the process's registry (made in main.ts): bus requests it
// answers, and, where the writer runs, rows written and set aside, what waits in ROWS and how
// far behind the writers are. ROWS and its consumer are shared by every writer, so each
// writing service reports the same backlog: aggregate those with max(), not sum().
import type { JetStreamManager } from '@nats-io/jetstream';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Logger } from '../bus/log.ts';
import { busRequestMetrics } from '../bus/request-metrics.ts';
import type { RequestObserver } from '../bus/rpc.ts';
import { runningTotal } from '../bus/running-total.ts';
import { consumers, streams } from '../bus/subjects.ts';
import { OWN_CHANGES_AFTER_MS } from './sessions/own-changes.ts';
import type { StorageWriter } from './writer/writer.ts';

/**
 * Writer lag: the age of the oldest row in ROWS, 0 when it is empty. ROWS is a work queue and
 * a writer acknowledges a row only once ClickHouse (or the dead-letter stream) has it, so the
 * oldest message in it is the oldest row not yet written.
 */
export function writerLagSeconds(state: { messages: number; first_ts: string }, now: number): number {
  if (state.messages === 0) return 0;
  return Math.max(0, (now - Date.parse(state.first_ts)) / 1000);
}

/** Who answered the session lists (storage/sessions/session-lists.ts), and how far memory lags. */
export interface SessionListMetrics {
  pages: Counter<'source'>;
  behind: Gauge;
  /** Told the index rows a list stored for its own user's changes (own-changes.ts). */
  ownRows: (rows: number) => void;
}

export class StorageMetrics {
  readonly bus: RequestObserver;
  /** Counts the ALTER ... DELETE mutations a purge round issued: each rewrites a month of a shared table. */
  readonly purgeMutations: (count: number) => void;
  readonly sessionLists: SessionListMetrics;

  constructor(private readonly registry: Registry) {
    this.bus = busRequestMetrics(registry);
    const registers = [registry];
    const mutations = new Counter({
      name: 'emo_purge_mutations_total',
      help: 'ALTER TABLE ... DELETE mutations this service issued to remove deleted sessions: one per table per purge round, however many sessions it removed',
      registers,
    });
    this.purgeMutations = (count) => mutations.inc(count);
    const ownRows = new Counter({
      name: 'emo_session_index_rows_by_lists_total',
      help: `Session index rows a list stored for its own user's changes, the index consumer not having stored them within ${OWN_CHANGES_AFTER_MS} ms: above 0 while the consumer is behind`,
      registers,
    });
    this.sessionLists = {
      pages: new Counter({
        name: 'emo_session_list_pages_total',
        help: 'Session list pages answered, by source: memory (the newest sessions of each user) or clickhouse',
        labelNames: ['source'],
        registers,
      }),
      behind: new Gauge({
        name: 'emo_session_list_memory_behind_revisions',
        help: 'Changes of the sessions bucket the in-memory session lists had yet to see at the last list; above 0, ClickHouse answers',
        registers,
      }),
      ownRows: (rows) => ownRows.inc(rows),
    };
  }

  /** Reads how many deleted sessions wait for a purge round, at each scrape (the queue is shared: aggregate with max()). */
  watchPurgeQueue(length: () => Promise<number>, log: Logger): void {
    new Gauge({
      name: 'emo_purge_queue_sessions',
      help: 'Deleted sessions whose rows wait for a purge round (the purges bucket, shared by every storage service)',
      registers: [this.registry],
      async collect() {
        try {
          this.set(await length());
        } catch (error) {
          log.debug({ err: error }, 'the purge queue could not be read for the metrics');
          this.set(NaN);
        }
      },
    });
  }

  /** Reads the writer's totals, and ROWS and its consumer from the server, at each scrape. */
  watchWriter(writer: StorageWriter, jsm: JetStreamManager, log: Logger): void {
    const registers = [this.registry];
    runningTotal(this.registry, 'emo_rows_written_total', 'Result rows this writer inserted into ClickHouse', () => writer.rowsWritten);
    runningTotal(
      this.registry,
      'emo_rows_dead_lettered_total',
      'Rows this writer set aside in the DEAD_ROWS stream because they can never be stored',
      () => writer.deadLetters,
    );
    runningTotal(
      this.registry,
      'emo_rows_fenced_total',
      'Rows this writer refused because their host had lost the session to another (a stale owner\'s epoch)',
      () => writer.rowsFenced,
    );
    runningTotal(
      this.registry,
      'emo_rows_redelivered_total',
      'Rows this writer inserted from redelivered messages it had not acknowledged: each may be a second copy, merged away by the tables and FINAL',
      () => writer.rowsRedelivered,
    );
    runningTotal(
      this.registry,
      'emo_rows_unknown_status_total',
      'Rows of inserts ClickHouse answered "unknown status" (ZooKeeper lost while registering them), retried: a replica may keep a second copy for up to five minutes',
      () => writer.rowsOfUnknownStatus,
    );
    runningTotal(this.registry, 'emo_writer_batches_pulled_total', 'Batches this writer pulled from ROWS', () => writer.batchesPulled);
    runningTotal(this.registry, 'emo_writer_pulled_bytes_total', 'Bytes of row messages this writer pulled from ROWS', () => writer.bytesPulled);
    new Gauge({
      name: 'emo_writer_largest_batch_bytes',
      help: 'Bytes of the largest batch this writer pulled since start; at most WRITER_PULL_MAX_BYTES',
      registers,
      collect() {
        this.set(writer.largestBatchBytes);
      },
    });
    // Unknown (NATS unreachable) is NaN rather than a stale value that looks healthy.
    const unknown = (gauge: Gauge, error: unknown) => {
      log.debug({ err: error }, 'ROWS could not be read for the metrics');
      gauge.set(NaN);
    };
    new Gauge({
      name: 'emo_rows_pending_messages',
      help: 'Row messages in ROWS not yet delivered to a writer (the writer consumer\'s num_pending)',
      registers,
      async collect() {
        try {
          this.set((await jsm.consumers.info(streams.rows, consumers.writer)).num_pending);
        } catch (error) {
          unknown(this, error);
        }
      },
    });
    new Gauge({
      name: 'emo_writer_lag_seconds',
      help: 'Age of the oldest row in ROWS, that is of the oldest row not yet written to ClickHouse; 0 when ROWS is empty',
      registers,
      async collect() {
        try {
          this.set(writerLagSeconds((await jsm.streams.info(streams.rows)).state, Date.now()));
        } catch (error) {
          unknown(this, error);
        }
      },
    });
  }
}

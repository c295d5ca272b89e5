// Session records in the JetStream KV bucket. Every change is a compare-and-set on the key's
// revision: two hosts can never both believe they own a session, and a change made on stale
// data fails and is retried on fresh data. After each change the ClickHouse session index
// gets the new revision (directly, so a list is current at once; through the row stream when
// ClickHouse is unreachable, so the index catches up).
//
// Reads for the API come from a bounded cache kept current by a watch on the bucket and by
// this host's own writes; compare-and-set changes always start from a fresh read.
import { setTimeout as sleep } from 'node:timers/promises';
import type { ClickHouseClient } from '@clickhouse/client';
import { StorageType, type JetStreamClient } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { buckets, subjects } from '../../bus/subjects.ts';
import type { WorkerStateMessage } from '../../bus/contracts/live.ts';
import type { SessionRecord } from '../../bus/contracts/session.ts';
import type { Logger } from '../../bus/log.ts';
import { indexRow, indexSession } from '../../storage/sessions-index.ts';
import type { RowPublisher } from '../rows.ts';

export interface Versioned {
  record: SessionRecord;
  revision: number;
}

/** Returned by a change function to leave the record as it is. */
export const UNCHANGED = Symbol('unchanged');

const CACHED_RECORDS = 100_000;

export class SessionStore {
  /** Recently read or changed records, least recently used first. */
  private readonly recent = new Map<string, Versioned>();
  private closed = false;

  private constructor(
    readonly kv: KV,
    private readonly nc: NatsConnection,
    private readonly clickhouse: ClickHouseClient,
    private readonly rows: RowPublisher,
    private readonly log: Logger,
  ) {}

  static async open(
    nc: NatsConnection,
    js: JetStreamClient,
    clickhouse: ClickHouseClient,
    rows: RowPublisher,
    log: Logger,
  ): Promise<SessionStore> {
    const kv = await new Kvm(js).create(buckets.sessions, { history: 1, storage: StorageType.File });
    return new SessionStore(kv, nc, clickhouse, rows, log);
  }

  /** The latest record, read from the bucket. */
  async get(id: string): Promise<Versioned | undefined> {
    const entry = await this.kv.get(id);
    if (!entry || entry.operation !== 'PUT') return undefined;
    return this.remember({ record: entry.json<SessionRecord>(), revision: entry.revision });
  }

  /** The record as this host last saw it: at most a watch delivery behind another host's write. */
  async read(id: string): Promise<Versioned | undefined> {
    const cached = this.recent.get(id);
    if (!cached) return this.get(id);
    this.recent.delete(id);
    this.recent.set(id, cached);
    return cached;
  }

  /**
   * Follows every change of every session: keeps the cache current and tells `onChange`. A
   * watch that ends (NATS restarted, the bucket's stream moved) is opened again, replaying the
   * latest record of every session, so nothing is missed.
   */
  async watch(onChange: (record: SessionRecord) => void): Promise<void> {
    let updates = await this.kv.watch();
    void (async () => {
      while (!this.closed) {
        try {
          for await (const entry of updates) {
            if (entry.operation !== 'PUT') {
              this.recent.delete(entry.key);
              continue;
            }
            const seen = this.remember({ record: entry.json<SessionRecord>(), revision: entry.revision });
            onChange(seen.record);
          }
        } catch (error) {
          this.log.warn({ err: error }, 'session watch broke');
        }
        while (!this.closed) {
          await sleep(1000);
          try {
            updates = await this.kv.watch();
            this.log.info('session watch resumed');
            break;
          } catch (error) {
            this.log.warn({ err: error }, 'session watch cannot resume yet');
          }
        }
      }
    })();
  }

  /** Ends the watch. */
  close(): void {
    this.closed = true;
  }

  async create(record: SessionRecord): Promise<Versioned> {
    const revision = await this.kv.create(record.id, JSON.stringify(record));
    await this.index(record, revision);
    this.announce(record);
    return this.remember({ record, revision });
  }

  /**
   * Applies `change` to the latest record and writes it if nobody wrote in between; on a
   * conflict, reads again and reapplies. `change` may return UNCHANGED to write nothing.
   */
  async update(
    id: string,
    change: (record: SessionRecord) => SessionRecord | typeof UNCHANGED,
    attempts = 10,
  ): Promise<Versioned | undefined> {
    for (let attempt = 0; attempt < attempts; attempt++) {
      const current = await this.get(id);
      if (!current) return undefined;
      const next = change(structuredClone(current.record));
      if (next === UNCHANGED) return current;
      try {
        const revision = await this.kv.update(id, JSON.stringify(next), current.revision);
        await this.index(next, revision);
        if (next.workerState !== current.record.workerState || next.state !== current.record.state) this.announce(next);
        return this.remember({ record: next, revision });
      } catch (error) {
        if (!isConflict(error)) throw error;
      }
    }
    throw new Error(`session ${id}: too many concurrent changes`);
  }

  /** Keeps the newest revision of a record; an older one arriving late is ignored. */
  private remember(seen: Versioned): Versioned {
    const known = this.recent.get(seen.record.id);
    if (known && known.revision > seen.revision) return known;
    this.recent.delete(seen.record.id);
    this.recent.set(seen.record.id, seen);
    if (this.recent.size > CACHED_RECORDS) this.recent.delete(this.recent.keys().next().value as string);
    return seen;
  }

  /** Live subscribers hear of every worker state, including the last one. */
  private announce(record: SessionRecord): void {
    const { id, state, workerState, stopReason } = record;
    const message: WorkerStateMessage = {
      session: id,
      state: workerState,
      sessionState: state,
      ...(stopReason ? { stopReason } : {}),
      at: Date.now(),
    };
    this.nc.publish(subjects.workerState(id), JSON.stringify(message));
  }

  private async index(record: SessionRecord, revision: number): Promise<void> {
    const row = indexRow(record, revision);
    try {
      await indexSession(this.clickhouse, row);
    } catch (error) {
      this.log.warn({ err: error, session: record.id }, 'session index unreachable; queued on the row stream');
      this.rows.publish(record.id, 'session', [row], `${record.id}.session.${revision}`);
    }
  }
}

export function isConflict(error: unknown): boolean {
  const text = error instanceof Error ? `${error.message} ${String((error as { code?: unknown }).code ?? '')}` : '';
  return /wrong last sequence|10071|key exists/i.test(text);
}

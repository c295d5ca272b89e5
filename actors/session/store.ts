// Changes to session records in the JetStream KV bucket. Every change is a compare-and-set on
// the key's revision: two hosts can never both believe they own a session, and a change made on
// stale data fails and is retried on fresh data. Reads, the cache and the watch are
// SessionRecords' (bus/session-records.ts); what this host writes is fed back into them. A change
// that a session list shows is sent to the session index (through a storage service, so a list
// is current at once; through the row stream when none answers, so the index catches up), and
// a worker-state change is announced to live subscribers. Heartbeats touch only the KV.
import type { JetStreamClient } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { subjects } from '../../bus/subjects.ts';
import type { WorkerStateMessage } from '../../bus/contracts/live.ts';
import type { SessionRecord } from '../../bus/contracts/session.ts';
import type { Logger } from '../../bus/log.ts';
import { SessionRecords, type Versioned } from '../../bus/session-records.ts';
import { call, type RequestObserver } from '../../bus/rpc.ts';
import { changesListing, indexRow } from '../../bus/session-view.ts';
import type { RowPublisher } from '../rows.ts';

// Short: a storage service answers in milliseconds, and the row stream is the way round it.
const INDEX_TIMEOUT_MS = 2000;

/** Returned by a change function to leave the record as it is. */
export const UNCHANGED = Symbol('unchanged');

export class SessionStore {
  private constructor(
    readonly records: SessionRecords,
    private readonly nc: NatsConnection,
    private readonly rows: RowPublisher,
    private readonly log: Logger,
    /** Times this host's requests to the storage services (the index, and a deletion's purge). */
    readonly observeRequests?: RequestObserver,
  ) {}

  static async open(
    nc: NatsConnection,
    js: JetStreamClient,
    rows: RowPublisher,
    log: Logger,
    replicas: number,
    observeRequests?: RequestObserver,
  ): Promise<SessionStore> {
    return new SessionStore(await SessionRecords.open(js, log, replicas), nc, rows, log, observeRequests);
  }

  async create(record: SessionRecord): Promise<Versioned> {
    const revision = await this.records.kv.create(record.id, JSON.stringify(record));
    await this.index(record, revision);
    this.announce(record);
    return this.records.remember({ record, revision });
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
      const current = await this.records.fresh(id);
      if (!current) return undefined;
      const next = change(structuredClone(current.record));
      if (next === UNCHANGED) return current;
      let revision: number;
      try {
        revision = await this.records.kv.update(id, JSON.stringify(next), current.revision);
      } catch (error) {
        if (isConflict(error)) continue;
        throw error;
      }
      if (changesListing(current.record, next)) await this.index(next, revision);
      if (next.workerState !== current.record.workerState || next.state !== current.record.state) this.announce(next);
      return this.records.remember({ record: next, revision });
    }
    throw new Error(`session ${id}: too many concurrent changes`);
  }

  /**
   * Deletes the record if it is still at `revision`: false when someone changed it since, so
   * the caller checks it again. Once deleted, every compare-and-set on it fails.
   */
  async remove(id: string, revision: number): Promise<boolean> {
    try {
      await this.records.kv.delete(id, { previousSeq: revision });
    } catch (error) {
      if (isConflict(error)) return false;
      throw error;
    }
    this.records.forget(id);
    return true;
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

  /** The list index hears of the change before the request that made it returns. */
  private async index(record: SessionRecord, revision: number): Promise<void> {
    const row = indexRow(record, revision);
    try {
      await call(this.nc, 'sessions.index', row, INDEX_TIMEOUT_MS, this.observeRequests);
    } catch (error) {
      this.log.warn({ err: error, session: record.id }, 'session index unreachable; queued on the row stream');
      this.rows.publish(record.id, 'session', [row], revision);
    }
  }

}

export function isConflict(error: unknown): boolean {
  const text = error instanceof Error ? `${error.message} ${String((error as { code?: unknown }).code ?? '')}` : '';
  return /wrong last sequence|10071|key exists/i.test(text);
}

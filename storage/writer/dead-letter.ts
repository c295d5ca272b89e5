// The dead-letter store: rows the writer could not store, kept with why, on the JetStream
// stream DEAD_ROWS (`emo.dead.<kind>`). The payload is the row (or the whole message, when it
// could not be read) byte for byte; the subject it came on and the reason travel in headers.
// A stream rather than a ClickHouse table: what ClickHouse refused once must not depend on
// ClickHouse to be kept. It is the overflow of last resort, so when full it drops its oldest.
import {
  DiscardPolicy,
  RetentionPolicy,
  StorageType,
  type JetStreamClient,
  type JetStreamManager,
} from '@nats-io/jetstream';
import { headers, nanos } from '@nats-io/transport-node';
import { headerText } from '../../bus/rpc.ts';
import { streams, subjects } from '../../bus/subjects.ts';
import { ensureStream } from './ensure-stream.ts';

export const DEAD_ROW_HEADERS = { subject: 'Emo-Row-Subject', reason: 'Emo-Dead-Reason' } as const;

const LIMITS = { maxBytes: 256 * 1024 ** 2, maxAgeDays: 30 };

/** `replicas`: how many NATS servers keep it. */
export async function ensureDeadLetterStream(jsm: JetStreamManager, replicas: number): Promise<void> {
  const config = {
    name: streams.deadRows,
    num_replicas: replicas,
    subjects: [subjects.deadRowsAll],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    discard: DiscardPolicy.Old,
    max_bytes: LIMITS.maxBytes,
    max_age: nanos(LIMITS.maxAgeDays * 24 * 3600 * 1000),
  };
  await ensureStream(jsm, config);
}

export interface DeadRow {
  /**
   * Names the row in DEAD_ROWS (its message id): set aside twice within the stream's duplicate
   * window (a publish whose acknowledgement was lost, a batch redelivered), it is kept once.
   */
  id: string;
  /** The kind the row was published as, or `unknown`. */
  kind: string;
  /** The ROWS subject it came on. */
  subject: string;
  payload: Uint8Array | string;
  reason: string;
}

/**
 * Stores each dead row, telling `stored` of each the stream took; resolves once it has them
 * all, and fails when any was not taken (NATS away), so that the caller retries only those.
 */
export async function storeDeadRows(js: JetStreamClient, rows: DeadRow[], stored: (row: DeadRow) => void): Promise<void> {
  const outcomes = await Promise.allSettled(
    rows.map(async (row) => {
      const h = headers();
      h.set(DEAD_ROW_HEADERS.subject, headerText(row.subject));
      h.set(DEAD_ROW_HEADERS.reason, headerText(row.reason));
      await js.publish(subjects.deadRow(/^[a-z]+$/.test(row.kind) ? row.kind : 'unknown'), row.payload, { headers: h, msgID: row.id });
      stored(row);
    }),
  );
  const failed = outcomes.find((outcome) => outcome.status === 'rejected');
  if (failed) throw failed.reason;
}

// The durable buffer between the analysis actors and ClickHouse: a JetStream work-queue stream
// holding every result row until the storage writer has inserted it and acknowledged it. When
// full it refuses new rows rather than dropping unwritten ones.
import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  RetentionPolicy,
  StorageType,
  type JetStreamManager,
} from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { consumers, streams, subjects } from '../../bus/subjects.ts';
import { ensureStream } from './ensure-stream.ts';

const MAX_AGE_SECONDS = 7 * 24 * 3600;
// Longer than any publisher retries the same message for.
const DUPLICATE_WINDOW_SECONDS = 120;

export interface RowsStreamOptions {
  /** How much it may hold; applies when it is created. */
  maxBytes: number;
  /** How many NATS servers keep it. */
  replicas: number;
}

/** Creates the stream and the writer's consumer, or brings them up to date. */
export async function ensureRowsStream(jsm: JetStreamManager, { maxBytes, replicas }: RowsStreamOptions): Promise<void> {
  const stream = {
    name: streams.rows,
    num_replicas: replicas,
    subjects: [subjects.rowsAll],
    retention: RetentionPolicy.Workqueue,
    storage: StorageType.File,
    // Full: refuse what comes, never drop what is waiting to be written. Publishers are told
    // and retry (actors/rows.ts).
    discard: DiscardPolicy.New,
    max_bytes: maxBytes,
    max_age: nanos(MAX_AGE_SECONDS * 1000),
    duplicate_window: nanos(DUPLICATE_WINDOW_SECONDS * 1000),
  };
  const existing = await ensureStream(jsm, stream);
  if (existing.config.discard !== stream.discard) {
    // A stream made by an earlier version dropped its oldest rows when full.
    await jsm.streams.update(streams.rows, { ...existing.config, discard: stream.discard });
  }
  const consumer = {
    durable_name: consumers.writer,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    // A pull that ends early leaves what was in flight unacknowledged until this passes; the
    // writer keeps a batch alive with working() while its insert retries, so it can be short.
    ack_wait: nanos(15_000),
    max_ack_pending: 200_000,
    max_waiting: 512,
  };
  try {
    const existing = await jsm.consumers.info(streams.rows, consumers.writer);
    if (existing.config.ack_wait !== consumer.ack_wait) {
      await jsm.consumers.update(streams.rows, consumers.writer, { ack_wait: consumer.ack_wait });
    }
  } catch {
    await jsm.consumers.add(streams.rows, consumer).catch(async (error) => {
      await jsm.consumers.info(streams.rows, consumers.writer).catch(() => {
        throw error;
      });
    });
  }
}

// The durable buffer between the analysis actors and ClickHouse: a JetStream work-queue stream
// holding every result row until the storage writer has inserted it and acknowledged it.
import {
  AckPolicy,
  DeliverPolicy,
  RetentionPolicy,
  StorageType,
  type JetStreamManager,
} from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { config } from '../bus/config.ts';
import { consumers, streams, subjects } from '../bus/subjects.ts';

export const ROWS_STREAM_LIMITS = {
  maxBytes: config.rowsStreamMaxBytes,
  maxAgeSeconds: 7 * 24 * 3600,
  duplicateWindowSeconds: 120,
};

export async function ensureRowsStream(jsm: JetStreamManager): Promise<void> {
  const stream = {
    name: streams.rows,
    subjects: [subjects.rowsAll],
    retention: RetentionPolicy.Workqueue,
    storage: StorageType.File,
    max_bytes: ROWS_STREAM_LIMITS.maxBytes,
    max_age: nanos(ROWS_STREAM_LIMITS.maxAgeSeconds * 1000),
    duplicate_window: nanos(ROWS_STREAM_LIMITS.duplicateWindowSeconds * 1000),
  };
  try {
    await jsm.streams.info(streams.rows);
  } catch {
    await jsm.streams.add(stream).catch(async (error) => {
      // Another host created it first.
      await jsm.streams.info(streams.rows).catch(() => {
        throw error;
      });
    });
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

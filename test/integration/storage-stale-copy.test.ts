// A stale owner's row of a second reaches the stream before the new owner's row of the same
// second (a host that stalled past its takeover and ran again): the writer refuses the stale copy
// (storage/writer/fence.ts) and stores the new owner's, which neither the stream's duplicate
// window nor the writer's memory of stored messages may take for the same message. Counted
// without FINAL on a database of the file's own, merges stopped.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { RowPublisher } from '../../actors/rows.ts';
import { readConfig } from '../../bus/config.ts';
import { connectBus } from '../../bus/connection.ts';
import { createLog } from '../../bus/log.ts';
import { SessionRecords } from '../../bus/session-records.ts';
import { consumers, streams } from '../../bus/subjects.ts';
import { waitUntil } from '../../ops/stack/process.ts';
import { connectClickHouse, queryRows, clickHouseServer, type ClickHouseClient } from '../../storage/clickhouse/clickhouse.ts';
import { sql } from '../../storage/clickhouse/sql.ts';
import type { StorageService } from '../../storage/service.ts';
import { ensureRowsStream } from '../../storage/writer/rows-stream.ts';
import { audioRow } from '../support/audio-row.ts';
import { activeSessionRecord } from '../support/session-record.ts';
import { startStorageInProcess } from '../support/storage.ts';

const config = readConfig();
const log = createLog(config).child({ component: 'storage-stale-copy' });
log.level = 'silent';
const database = `stale_copy_${process.pid}`;

let nc: NatsConnection;
let clickhouse: ClickHouseClient;
let storage: StorageService | undefined;

test.before(async () => {
  nc = await connectBus('storage-stale-copy test', config.natsUrl, log);
  await ensureRowsStream(await jetstreamManager(nc), { maxBytes: config.rowsStreamMaxBytes, replicas: config.natsReplicas });
  clickhouse = connectClickHouse(clickHouseServer(config), null);
  storage = await startStorageInProcess(config, `storage-stale-copy-${process.pid}`, database, log);
  await clickhouse.command({ query: `SYSTEM STOP MERGES ${database}.audio_seconds` });
});

test.after(async () => {
  await storage?.stop();
  await clickhouse?.command({ query: `DROP DATABASE IF EXISTS ${database}` }).catch(() => {});
  await clickhouse?.close();
  await nc?.drain();
});

test('the new owner\'s row of a second is stored after a stale owner\'s copy of it was refused', async () => {
  const js = jetstream(nc);
  const records = await SessionRecords.open(js, log, config.natsReplicas);
  // Taken over 10 s into the session: epoch 2's seconds start at 10.
  const base = activeSessionRecord('stale', 'stale copy');
  const record = { ...base, epoch: 2, epochStartedAt: base.createdAt + 10_000 };
  await records.create(record);
  const owner = () => ({ product: record.product, user: record.user });
  const stale = new RowPublisher(js, log, owner);
  const current = new RowPublisher(js, log, owner);
  stale.own(record.id, 1, 60_000);
  current.own(record.id, 2, 60_000);
  const where = sql`session = ${record.id}`;
  const rows = async () => queryRows<{ second: number; intensity: number }>(clickhouse,
    `SELECT second, intensity FROM ${database}.audio_seconds WHERE ${where} ORDER BY second, intensity`);

  // The stale owner's rows: second 5 (before the takeover, its own) is kept, second 12 refused.
  stale.publish(record.id, 'audio', [{ ...audioRow(record.id, 5), intensity: -40 }], 5);
  stale.publish(record.id, 'audio', [{ ...audioRow(record.id, 12), intensity: -40 }], 12);
  await waitUntil('the stale owner\'s rows handled', async () => stale.unacknowledged === 0 && (await rows()).length === 1, 30_000);
  // Whatever the writer pulled with second 5 is handled: second 12 was refused by then.
  await waitUntil('the stream drained', async () => {
    const info = await (await jetstreamManager(nc)).consumers.info(streams.rows, consumers.writer);
    return info.num_pending === 0 && info.num_ack_pending === 0;
  }, 30_000);

  current.publish(record.id, 'audio', [{ ...audioRow(record.id, 12), intensity: -20 }], 12);
  current.publish(record.id, 'audio', [{ ...audioRow(record.id, 13), intensity: -20 }], 13);
  await waitUntil('the new owner\'s rows', async () => (await rows()).length >= 3, 30_000)
    .catch(async (error) => assert.unreachable(`${(error as Error).message}: stored ${JSON.stringify(await rows())}`));
  assert.equal((await rows()).map((row) => [Number(row.second), Number(row.intensity)]), [[5, -40], [12, -20], [13, -20]],
    'one row a second: the stale owner\'s before the takeover, the new owner\'s after it');
  records.close();
});

test.run();

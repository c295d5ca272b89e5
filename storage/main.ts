// Entry point of a storage service process.
import { readStorageConfig } from '../bus/config.ts';
import { connectBus } from '../bus/connection.ts';
import { createLog } from '../bus/log.ts';
import { createRegistry, MetricsServer } from '../bus/metrics-server.ts';
import { logUnhandled, stopOnSignal } from '../bus/process-lifecycle.ts';
import { clickHouseServer } from './clickhouse/clickhouse.ts';
import { StorageMetrics } from './metrics.ts';
import { StorageService } from './service.ts';

const config = readStorageConfig();
const log = createLog(config);
logUnhandled(log, 'storage service');
const registry = createRegistry();
const metrics = await MetricsServer.start(registry, config, log);
const nc = await connectBus(`storage ${config.hostId}`, config.natsUrl, log, { user: 'storage' });
const service = await StorageService.start(
  nc,
  {
    id: config.hostId,
    clickhouse: clickHouseServer(config),
    database: config.clickhouseDatabase,
    writer: config.storageWriter
      ? {
          batchRows: config.writerBatchRows,
          pullMaxBytes: config.writerPullMaxBytes,
          flushMs: config.writerFlushMs,
          inserted: exitAfter(config.writerExitAfterInserts),
        }
      : undefined,
    connections: {
      reads: config.clickhouseReadConnections,
      writer: config.clickhouseWriterConnections,
      index: config.clickhouseIndexConnections,
    },
    readsInFlightPerUser: config.storageReadsInFlightPerUser,
    rowsStreamMaxBytes: config.rowsStreamMaxBytes,
    natsReplicas: config.natsReplicas,
    sessionMaxSeconds: config.sessionMaxSeconds,
    sessionListMemoryPerUser: config.sessionListMemoryPerUser,
    sessionListMemoryTotal: config.sessionListMemoryTotal,
    purge: {
      windowSeconds: config.purgeWindowSeconds,
      batchSessions: config.purgeBatchSessions,
      queueMaxBytes: config.purgeQueueMaxBytes,
    },
    sessionRecords: {
      bucketMaxBytes: config.sessionsBucketMaxBytes,
      maxAgeSeconds: config.sessionRecordMaxAgeSeconds,
      cacheBytes: config.sessionRecordCacheBytes,
    },
    metrics: new StorageMetrics(registry),
  },
  log.child({ component: 'storage' }),
);
metrics.markReady();
stopOnSignal(log, 'storage service', () => {
  metrics.markStopping();
  return service.stop();
});

/** The test-only fault of WRITER_EXIT_AFTER_INSERTS: the process dies with a batch inserted and not acknowledged. */
function exitAfter(inserts: number): (() => void) | undefined {
  if (!inserts) return undefined;
  let count = 0;
  return () => {
    if (++count < inserts) return;
    log.warn({ inserts }, 'exiting between an insert and its acknowledgement (WRITER_EXIT_AFTER_INSERTS)');
    process.exit(70);
  };
}

// A storage service inside the test's own process, on a database of the test's, configured as
// the storage process would be: for tests that stop and start it at chosen moments.
import type { Config } from '../../bus/config.ts';
import { connectBus } from '../../bus/connection.ts';
import type { Logger } from '../../bus/log.ts';
import { clickHouseServer } from '../../storage/clickhouse/clickhouse.ts';
import { StorageService } from '../../storage/service.ts';

export async function startStorageInProcess(config: Config, id: string, database: string, log: Logger): Promise<StorageService> {
  return StorageService.start(await connectBus(id, config.natsUrl, log, { user: 'storage' }), {
    id,
    clickhouse: clickHouseServer(config),
    database,
    writer: { batchRows: config.writerBatchRows, pullMaxBytes: config.writerPullMaxBytes, flushMs: config.writerFlushMs },
    connections: { reads: config.clickhouseReadConnections, writer: config.clickhouseWriterConnections, index: config.clickhouseIndexConnections },
    readsInFlightPerUser: config.storageReadsInFlightPerUser,
    rowsStreamMaxBytes: config.rowsStreamMaxBytes,
    natsReplicas: config.natsReplicas,
    sessionMaxSeconds: config.sessionMaxSeconds,
    sessionListMemoryPerUser: config.sessionListMemoryPerUser,
    sessionListMemoryTotal: config.sessionListMemoryTotal,
    purge: { windowSeconds: config.purgeWindowSeconds, batchSessions: config.purgeBatchSessions, queueMaxBytes: config.purgeQueueMaxBytes },
    sessionRecords: { bucketMaxBytes: config.sessionsBucketMaxBytes, maxAgeSeconds: config.sessionRecordMaxAgeSeconds, cacheBytes: config.sessionRecordCacheBytes },
  }, log);
}

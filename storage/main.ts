// Entry point of a storage service process.
import { readConfig } from '../bus/config.ts';
import { connectBus } from '../bus/connection.ts';
import { createLog } from '../bus/log.ts';
import { logUnhandled, stopOnSignal } from '../bus/process-lifecycle.ts';
import { clickHouseServer } from './clickhouse.ts';
import { StorageService } from './service.ts';

const config = readConfig();
const log = createLog(config);
logUnhandled(log, 'storage service');
const nc = await connectBus(`storage ${config.hostId}`, config.natsUrl, log);
const service = await StorageService.start(
  nc,
  {
    id: config.hostId,
    clickhouse: clickHouseServer(config),
    database: config.clickhouseDatabase,
    writer: config.storageWriter ? { batchRows: config.writerBatchRows, flushMs: config.writerFlushMs } : undefined,
    rowsStreamMaxBytes: config.rowsStreamMaxBytes,
    sessionMaxSeconds: config.sessionMaxSeconds,
  },
  log.child({ component: 'storage' }),
);
stopOnSignal(log, 'storage service', () => service.stop());

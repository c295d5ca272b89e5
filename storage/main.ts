// Entry point of a storage service process.
import { config } from '../bus/config.ts';
import { connectBus } from '../bus/connection.ts';
import { log } from '../bus/log.ts';
import { logUnhandled, stopOnSignal } from '../bus/process-lifecycle.ts';
import { StorageService } from './service.ts';

logUnhandled(log, 'storage service');
const nc = await connectBus(`storage ${config.hostId}`);
const service = await StorageService.start(
  nc,
  {
    id: config.hostId,
    database: config.clickhouseDatabase,
    writer: config.storageWriter,
    rowsStreamMaxBytes: config.rowsStreamMaxBytes,
    sessionMaxSeconds: config.sessionMaxSeconds,
  },
  log.child({ component: 'storage' }),
);
stopOnSignal(log, 'storage service', () => service.stop());

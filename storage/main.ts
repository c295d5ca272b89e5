// Entry point of a storage service process.
import { config } from '../bus/config.ts';
import { connectBus } from '../bus/connection.ts';
import { log } from '../bus/log.ts';
import { StorageService } from './service.ts';

process.on('unhandledRejection', (reason) => log.error({ err: reason }, 'unhandled rejection; the service carries on'));
process.on('uncaughtException', (error) => {
  log.fatal({ err: error }, 'uncaught exception; the service exits');
  process.exit(1);
});

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
let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'storage service stopping');
    service.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        log.error({ err: error }, 'storage service did not stop cleanly');
        process.exit(1);
      },
    );
  });
}

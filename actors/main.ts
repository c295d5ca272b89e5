// Entry point of an actor host process.
import { ActorHost } from './host.ts';
import { log } from '../bus/log.ts';

// Last resort: every known path handles its own failures. A rejection nobody awaited is a bug
// to log, not a reason to drop every session of this host; a thrown exception leaves the
// process in an unknown state, so it exits and its supervisor starts it again.
process.on('unhandledRejection', (reason) => log.error({ err: reason }, 'unhandled rejection; the host carries on'));
process.on('uncaughtException', (error) => {
  log.fatal({ err: error }, 'uncaught exception; the host exits');
  process.exit(1);
});

const host = await ActorHost.start();
let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'actor host stopping');
    host.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        log.error({ err: error }, 'actor host did not stop cleanly');
        process.exit(1);
      },
    );
  });
}

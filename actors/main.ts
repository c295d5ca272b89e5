// Entry point of an actor host process.
import { ActorHost } from './host.ts';
import { log } from '../bus/log.ts';

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

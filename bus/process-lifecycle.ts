// How a service process lives and ends: last-resort handlers for failures nothing else caught,
// and a clean stop on SIGINT or SIGTERM.
import type { Logger } from './log.ts';

/**
 * A rejection nobody awaited is a bug to log, not a reason to drop everything the process
 * serves; a thrown exception leaves the process in an unknown state, so it exits and its
 * supervisor starts it again.
 */
export function logUnhandled(log: Logger, name: string): void {
  process.on('unhandledRejection', (reason) => log.error({ err: reason }, `unhandled rejection; the ${name} carries on`));
  process.on('uncaughtException', (error) => {
    log.fatal({ err: error }, `uncaught exception; the ${name} exits`);
    process.exit(1);
  });
}

/** Runs `stop` once on SIGINT or SIGTERM, then exits (1 if it failed). */
export function stopOnSignal(log: Logger, name: string, stop: () => Promise<void>): void {
  let stopping = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      if (stopping) return;
      stopping = true;
      log.info({ signal }, `${name} stopping`);
      stop().then(
        () => process.exit(0),
        (error: unknown) => {
          log.error({ err: error }, `${name} did not stop cleanly`);
          process.exit(1);
        },
      );
    });
  }
}

// Keeps a service running: when it exits on its own it is started again, after a delay that
// doubles with each quick failure (a process that crashes at start must not spin) and resets
// once it has stayed up for a while. Stopping the supervisor stops the service for good.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Service } from './process.ts';

export interface Supervised {
  name: string;
  stop(): Promise<void>;
}

const FIRST_DELAY_MS = 1000;
const MAX_DELAY_MS = 30_000;
// Up this long, a process counts as healthy again and the next crash restarts it at once.
const HEALTHY_AFTER_MS = 60_000;

export function supervise(
  first: Service,
  restart: () => Service,
  report: (message: string) => void,
): Supervised {
  let service = first;
  let stopped = false;
  let delay = FIRST_DELAY_MS;
  let startedAt = Date.now();

  const watch = async (): Promise<void> => {
    while (!stopped) {
      const code = await service.exited;
      if (stopped) return;
      if (Date.now() - startedAt > HEALTHY_AFTER_MS) delay = FIRST_DELAY_MS;
      report(`${service.name} exited (${code}); restarting in ${delay / 1000} s`);
      await sleep(delay);
      delay = Math.min(delay * 2, MAX_DELAY_MS);
      if (stopped) return;
      startedAt = Date.now();
      service = restart();
    }
  };
  void watch();

  return {
    name: first.name,
    async stop() {
      stopped = true;
      await service.stop();
    },
  };
}

// Readiness on the bus: every process answers `emo.health.<its id>` once it serves, so a
// supervisor, a test or an operator asks the process itself instead of reading its logs.
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { subjects } from './subjects.ts';

export interface Health {
  id: string;
  role: string;
  /** Seconds since the process became ready. */
  uptime: number;
}

/** Starts answering health requests: call it when the process is ready to serve. */
export function serveHealth(nc: NatsConnection, id: string, role: string): Subscription {
  const readyAt = Date.now();
  return nc.subscribe(subjects.health(id), {
    callback: (error, msg) => {
      if (error) return;
      const health: Health = { id, role, uptime: (Date.now() - readyAt) / 1000 };
      msg.respond(JSON.stringify(health));
    },
  });
}

/** Asks until the process answers, or fails after `timeoutMs` (or as soon as `gone` settles). */
export async function waitForHealth(nc: NatsConnection, id: string, timeoutMs: number, gone?: Promise<unknown>): Promise<Health> {
  let ended = false;
  void gone?.then(() => (ended = true));
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && !ended) {
    try {
      const reply = await nc.request(subjects.health(id), '', { timeout: 1000 });
      return reply.json<Health>();
    } catch {
      await sleep(200);
    }
  }
  throw new Error(ended ? `${id} exited before it was ready` : `${id} was not ready within ${timeoutMs / 1000} s`);
}

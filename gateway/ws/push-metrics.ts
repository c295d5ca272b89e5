// What the gateway pushed to WebSocket clients and what it dropped, for /metrics: a user over
// its push budget, or a socket that does not read, shows here before anyone complains.
import { Counter, type Registry } from 'prom-client';

/** Why a pushed message was not sent to a socket (outbox.ts). */
const DROP_REASONS = ['push_budget', 'slow_client'] as const;
export type DropReason = (typeof DROP_REASONS)[number];

export interface PushMetrics {
  pushed(bytes: number): void;
  dropped(reason: DropReason): void;
}

/** Counters registered on `registry` when there is one (the gateway's); counted alone otherwise. */
export function pushMetrics(registry?: Registry): PushMetrics {
  const registers = registry ? [registry] : [];
  const bytes = new Counter({ name: 'emo_websocket_pushed_bytes_total', help: 'Bytes of pushed data sent to WebSocket clients', registers });
  const dropped = new Counter({
    name: 'emo_websocket_messages_dropped_total',
    help: 'Pushed messages not sent to a socket: its user over the push budget, or the socket not reading',
    labelNames: ['reason'],
    registers,
  });
  // Served at 0 from the start, so that a rate over it is defined before the first drop.
  for (const reason of DROP_REASONS) dropped.inc({ reason }, 0);
  return {
    pushed: (count) => bytes.inc(count),
    dropped: (reason) => dropped.inc({ reason }),
  };
}

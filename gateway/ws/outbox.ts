// What one socket is pushed, and the slow-consumer policy: pushed data is never buffered
// without bound. A message is dropped for this socket (and counted) when its user is over the
// push budget (push-budgets.ts) or when the socket already has more than
// WS_PROTOCOL.maxBufferedBytes waiting to be sent. The socket is told once, when its messages
// start being dropped, with a message `{id: null, path: "channels:dropped", status: 429, body}`
// (the API error body), and again only after a message got through in between. A socket that
// stays over the buffered bound for WS_PROTOCOL.slowGraceMs is closed (1013): it is not reading.
import type { WebSocket } from 'ws';
import { deliveryHead, type Delivery } from './delivery.ts';
import { WS_PROTOCOL } from './limits.ts';
import { DROPPED_PATH, errorReply } from './protocol.ts';
import type { PushBudget } from './push-budgets.ts';
import type { DropReason, PushMetrics } from './push-metrics.ts';

export interface OutboxDeps {
  budget: PushBudget;
  /** The user's budget, for the message the client is told. */
  bytesPerSecond: number;
  metrics: PushMetrics;
  /** Closes the socket as too slow. */
  tooSlow(): void;
}

export class Outbox {
  /** Why messages are being dropped, once the client was told; none while they get through. */
  private dropping?: DropReason;
  /** When the socket went over the buffered bound, while it stays over. */
  private slowSince?: number;

  constructor(
    private readonly socket: WebSocket,
    private readonly deps: OutboxDeps,
  ) {}

  push(subscriptionId: string, delivery: Delivery, now: number = Date.now()): void {
    if (this.socket.readyState !== this.socket.OPEN) return;
    if (this.socket.bufferedAmount > WS_PROTOCOL.maxBufferedBytes) {
      this.slowSince ??= now;
      if (now - this.slowSince >= WS_PROTOCOL.slowGraceMs) return this.deps.tooSlow();
      return this.drop('slow_client');
    }
    this.slowSince = undefined;
    const head = deliveryHead(subscriptionId);
    const bytes = Buffer.byteLength(head) + delivery.tail.length;
    if (!this.deps.budget.take(bytes, now)) return this.drop('push_budget');
    this.dropping = undefined;
    // Two fragments of one text message, sent back to back: nothing else can come between them.
    this.socket.send(head, { binary: false, fin: false });
    this.socket.send(delivery.tail, { binary: false, fin: true });
    this.deps.metrics.pushed(bytes);
  }

  /** The socket is gone: its share of the user's budget with it. */
  release(): void {
    this.deps.budget.release();
  }

  private drop(reason: DropReason): void {
    this.deps.metrics.dropped(reason);
    if (this.dropping === reason) return;
    this.dropping = reason;
    this.socket.send(errorReply({ path: DROPPED_PATH }, 429, reason, this.explain(reason)));
  }

  private explain(reason: DropReason): string {
    if (reason === 'push_budget') {
      return `pushed data is limited to ${this.deps.bytesPerSecond} bytes/s per user on this gateway, over all its connections; messages are dropped while over it (fewer subscriptions, or longer periods, fit)`;
    }
    return `more than ${WS_PROTOCOL.maxBufferedBytes} bytes pushed to this connection are not read yet; messages are dropped until it catches up, and it is closed (1013) if it has not within ${WS_PROTOCOL.slowGraceMs / 1000} s`;
  }
}

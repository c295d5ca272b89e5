// What one client may hold and do on the WebSocket API. Going over a limit answers 429 with
// the API error body; an address's sockets not signed in make way for new ones (not-signed-in.ts).

/** The operator's limits (configuration). */
export interface WsLimits {
  subscriptionsPerConnection: number;
  /** Subscriptions of one user over all its connections to this gateway. */
  subscriptionsPerUser: number;
  /** Bytes of pushed data one user's sockets may be sent per second by this gateway (push-budgets.ts). */
  pushBytesPerSecondPerUser: number;
  connectionsPerUser: number;
  /** Sockets from one address that have not authenticated yet; past it the oldest is closed. */
  unauthenticatedPerAddress: number;
  /** A socket that has not authenticated this long after it opened is closed. */
  authTimeoutMs: number;
  messagesPerMinute: number;
  /** Silence from the client for this long closes the socket. */
  idleMs: number;
  /** Upgrades (new sockets) per client address per minute; past it 429 on the upgrade. */
  upgradesPerAddressPerMinute: number;
}

/** The protocol's own limits. */
export const WS_PROTOCOL = {
  /** Largest message a client may send. */
  maxMessageBytes: 64 * 1024,
  /** Pushed data waiting to be sent to a socket past which its next messages are dropped (outbox.ts). */
  maxBufferedBytes: 2 * 1024 * 1024,
  /** A socket over maxBufferedBytes this long is not reading: it is closed (1013). */
  slowGraceMs: 30_000,
} as const;

/** A token bucket: `perMinute` messages a minute on average, bursts up to `perMinute`. */
export class MessageRate {
  private tokens: number;
  private updatedAt: number;

  constructor(
    private readonly perMinute: number,
    now: number = Date.now(),
  ) {
    this.tokens = perMinute;
    this.updatedAt = now;
  }

  /** Takes one message's token; false when the client is over its rate. */
  take(now: number = Date.now()): boolean {
    this.tokens = Math.min(this.perMinute, this.tokens + ((now - this.updatedAt) * this.perMinute) / 60_000);
    this.updatedAt = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

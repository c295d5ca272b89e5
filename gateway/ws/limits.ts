// What one client may hold and do on the WebSocket API. Going over a limit answers 429 with
// the API error body; the connection stays usable.
export interface WsLimits {
  subscriptionsPerConnection: number;
  connectionsPerUser: number;
  messagesPerMinute: number;
  /** Silence from the client for this long closes the socket. */
  idleMs: number;
  /** Largest message a client may send. */
  maxMessageBytes: number;
  /** A client that lets this much pile up unread is too slow and is disconnected. */
  maxBufferedBytes: number;
}

export const DEFAULT_WS_LIMITS: WsLimits = {
  subscriptionsPerConnection: 50,
  connectionsPerUser: 20,
  messagesPerMinute: 600,
  idleMs: 65_000,
  maxMessageBytes: 64 * 1024,
  maxBufferedBytes: 8 * 1024 * 1024,
};

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

/** Open authenticated connections per user, in this gateway. */
export class UserConnections {
  private readonly counts = new Map<string, number>();

  constructor(private readonly limit: number) {}

  /** Counts one more connection for the user; false (and nothing counted) when at the limit. */
  acquire(user: string): boolean {
    const count = this.counts.get(user) ?? 0;
    if (count >= this.limit) return false;
    this.counts.set(user, count + 1);
    return true;
  }

  release(user: string): void {
    const count = (this.counts.get(user) ?? 0) - 1;
    if (count > 0) this.counts.set(user, count);
    else this.counts.delete(user);
  }
}

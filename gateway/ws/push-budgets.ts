// How many bytes of pushed data each user's sockets may be sent per second in this gateway: one
// token bucket of bytes per user, shared by all of the user's sockets and subscriptions, so
// that the load a user's subscriptions cause is paid for by that user alone. It holds one
// second of the rate. A frame is let through whenever the bucket is not empty and its bytes are
// taken all at once, even into debt: a frame larger than the bucket still passes, and the debt
// is paid back before the next one. Over any span of T seconds a user is sent at most
// rate * (T + 1) plus one frame.
//
// Synchronous, unlike rate-limiter-flexible's limiters (whose consume returns a promise): the fate
// of each frame is decided in the fan-out loop, in the order the frames are sent.

export interface PushBudget {
  /** Spends `bytes` for a frame about to be sent; false (nothing spent) when the user is over budget. */
  take(bytes: number, now?: number): boolean;
  /** The socket is gone. */
  release(now?: number): void;
}

interface Bucket {
  tokens: number;
  updatedAt: number;
  sockets: number;
}

export class PushBudgets {
  private readonly buckets = new Map<string, Bucket>();
  /** Users without a socket whose bucket is still in debt: kept until refilled, so that reconnecting does not refill it. */
  private readonly leaving = new Set<string>();

  constructor(readonly bytesPerSecond: number) {}

  /** The budget a new socket of `user` spends: the user's, shared with its other sockets. */
  open(user: string, now: number = Date.now()): PushBudget {
    let bucket = this.buckets.get(user);
    if (!bucket) {
      bucket = { tokens: this.bytesPerSecond, updatedAt: now, sockets: 0 };
      this.buckets.set(user, bucket);
    }
    bucket.sockets++;
    this.leaving.delete(user);
    const held = bucket;
    let released = false;
    return {
      take: (bytes, at = Date.now()) => {
        this.refill(held, at);
        if (held.tokens <= 0) return false;
        held.tokens -= bytes;
        return true;
      },
      release: (at = Date.now()) => {
        if (released) return;
        released = true;
        held.sockets--;
        if (held.sockets === 0) this.leaving.add(user);
        this.forgetRefilled(at);
      },
    };
  }

  /** Users whose bucket this gateway holds (a socket open, or in debt). */
  get size(): number {
    return this.buckets.size;
  }

  private refill(bucket: Bucket, now: number): void {
    const elapsed = Math.max(0, now - bucket.updatedAt);
    bucket.tokens = Math.min(this.bytesPerSecond, bucket.tokens + (elapsed * this.bytesPerSecond) / 1000);
    bucket.updatedAt = now;
  }

  private forgetRefilled(now: number): void {
    for (const user of this.leaving) {
      const bucket = this.buckets.get(user) as Bucket;
      this.refill(bucket, now);
      if (bucket.tokens < this.bytesPerSecond) continue;
      this.buckets.delete(user);
      this.leaving.delete(user);
    }
  }
}

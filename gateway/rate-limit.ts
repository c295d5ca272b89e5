// A fixed-window request budget per key (a user, a client address), kept in this gateway's
// memory: each gateway process counts on its own.
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';

/** Where a key stands in its window, as the RateLimit-* headers tell it. */
export interface Budget {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window starts again. */
  resetSeconds: number;
  windowSeconds: number;
}

export class RateLimit {
  private readonly limiter: RateLimiterMemory;

  constructor(
    private readonly limit: number,
    private readonly windowSeconds: number,
  ) {
    this.limiter = new RateLimiterMemory({ points: limit, duration: windowSeconds });
  }

  /**
   * Spends `points` of the key's budget (one request, a batch's events or bytes); refused (and
   * still counted) past the limit. More than a whole window's worth spends the whole window
   * rather than never passing.
   */
  async take(key: string, points = 1): Promise<Budget> {
    try {
      return this.budget(await this.limiter.consume(key, Math.min(points, this.limit)), true);
    } catch (refusal) {
      if (refusal instanceof RateLimiterRes) return this.budget(refusal, false);
      throw refusal;
    }
  }

  /** Gives back `points` the key spent in this window (a socket that turned out to sign in). */
  async refund(key: string, points = 1): Promise<void> {
    await this.limiter.reward(key, points);
  }

  /** The key's budget if the window's points are all spent already, else undefined; spends nothing. */
  async spent(key: string): Promise<Budget | undefined> {
    const state = await this.limiter.get(key);
    return state && state.remainingPoints <= 0 ? this.budget(state, false) : undefined;
  }

  private budget(state: RateLimiterRes, allowed: boolean): Budget {
    return {
      allowed,
      limit: this.limit,
      remaining: state.remainingPoints,
      resetSeconds: Math.ceil(state.msBeforeNext / 1000),
      windowSeconds: this.windowSeconds,
    };
  }
}

/** The RateLimit-* headers of an answer (and Retry-After on a refusal). */
export function budgetHeaders(budget: Budget): Record<string, string> {
  return {
    'RateLimit-Limit': String(budget.limit),
    'RateLimit-Remaining': String(budget.remaining),
    'RateLimit-Reset': String(budget.resetSeconds),
    'RateLimit-Policy': `${budget.limit};w=${budget.windowSeconds}`,
    ...(budget.allowed ? {} : { 'Retry-After': String(Math.max(1, budget.resetSeconds)) }),
  };
}

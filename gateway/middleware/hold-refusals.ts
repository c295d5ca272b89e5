// A request refused for going past one of its user's or address's budgets (429 `rate_limited`)
// is answered after a hold. Refusing is cheap, but not free: a client that sends its next
// request as soon as the last is answered, as a flood over a few connections does, is refused
// thousands of times a second, and that CPU comes out of the cores every user's requests share.
// Held, each of its connections is refused a few times a second, at the cost of a timer. A
// client that honours Retry-After (a second at least) waits longer than the hold anyway.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Context, Next } from 'koa';
import { ServiceError } from '../../bus/errors.ts';

export function holdRefusals(holdMs: number) {
  return async (_ctx: Context, next: Next): Promise<void> => {
    try {
      await next();
    } catch (error) {
      if (holdMs > 0 && error instanceof ServiceError && error.status === 429 && error.code === 'rate_limited') await sleep(holdMs);
      throw error;
    }
  };
}

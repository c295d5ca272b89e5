// A request refused for going past one of its user's or address's budgets (429 `rate_limited`)
// is answered after a hold. Refusing is cheap, but not free: a client that sends its next
// request as soon as the last is answered, as a flood over a few connections does, is refused
// thousands of times a second, and that CPU comes out of the cores every user's requests share.
// Held, each of its connections is refused a few times a second, at the cost of a timer. Past
// `heldAtOnce` refusals held for one user (or one address, before authentication) each further
// one is held longer in proportion, so that more connections do not buy more refusals: one
// user is refused at most about heldAtOnce per hold, however many connections it opens. A
// client that honours Retry-After (a second at least) waits longer than the hold anyway.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Context, Next } from 'koa';
import { ServiceError } from '../../bus/errors.ts';
import type { Caller } from '../../bus/contracts/session.ts';
import type { ClientAddresses } from '../client-address.ts';

export interface RefusalHold {
  holdMs: number;
  /** Refusals held for one key before each further one is held longer. */
  heldAtOnce: number;
  addresses: ClientAddresses;
}

export function holdRefusals({ holdMs, heldAtOnce, addresses }: RefusalHold) {
  const held = new Map<string, number>();
  return async (ctx: Context, next: Next): Promise<void> => {
    try {
      await next();
    } catch (error) {
      if (holdMs > 0 && error instanceof ServiceError && error.status === 429 && error.code === 'rate_limited') {
        const caller = ctx.state.caller as Caller | undefined;
        const key = caller ? `user ${caller.user}` : `address ${addresses.of(ctx.req)}`;
        const count = (held.get(key) ?? 0) + 1;
        held.set(key, count);
        try {
          await sleep(holdMs * Math.max(1, count / heldAtOnce));
        } finally {
          const left = (held.get(key) ?? 1) - 1;
          if (left > 0) held.set(key, left);
          else held.delete(key);
        }
      }
      throw error;
    }
  };
}

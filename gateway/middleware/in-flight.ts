// A user's requests being answered at once are bounded: past the bound a request is refused at
// once (429) instead of queueing on the bus ahead of other users' requests, where a burst of
// one user's reads would time out everyone's (503). Counted from authentication to the answer,
// body included.
import type { Context, Next } from 'koa';
import type { Counts } from '../counts.ts';
import { callerOf } from '../auth/caller.ts';
import { refuse } from './refuse.ts';

export function inFlight(perUser: Counts) {
  return async (ctx: Context, next: Next): Promise<void> => {
    const { user } = callerOf(ctx);
    if (!perUser.acquire(user)) {
      const busy = { allowed: false, limit: perUser.limit, remaining: 0, resetSeconds: 1, windowSeconds: 1 };
      throw refuse(ctx, busy, `at most ${perUser.limit} requests in flight per user`);
    }
    try {
      await next();
    } finally {
      perUser.release(user);
    }
  };
}

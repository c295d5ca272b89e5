// A user whose events budget for this second is spent already is refused before the body is
// read: parsing and validating a batch of 1000 events costs the gateway as much when it is then
// refused as when it is accepted, and a flood of refused batches took the CPU that every other
// user's requests need. The batch's own count and bytes are spent once it is parsed (routes/events.ts).
import type { Context, Next } from 'koa';
import { callerOf } from '../auth/caller.ts';
import type { UserBudgets } from '../user-budgets.ts';
import { refuse } from './refuse.ts';

// Events of a named source; the shared path also registers sources, which spend no events.
const EVENTS_OF_A_SOURCE = /^\/v1\/sessions\/[^/]+\/events\/[^/]+$/;

export function eventsBeforeBody(budgets: UserBudgets) {
  return async (ctx: Context, next: Next): Promise<void> => {
    if (ctx.method === 'POST' && EVENTS_OF_A_SOURCE.test(ctx.path)) {
      const { user } = callerOf(ctx);
      const events = await budgets.events.spent(user);
      if (events) throw refuse(ctx, events, `at most ${events.limit} events per second per user`);
      const bytes = await budgets.eventBytes.spent(user);
      if (bytes) throw refuse(ctx, bytes, `at most ${bytes.limit} bytes of events per second per user`);
    }
    await next();
  };
}

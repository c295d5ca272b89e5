// A request over one of its budgets: 429, the RateLimit-* headers of that budget and Retry-After.
import type { Context } from 'koa';
import { ServiceError } from '../../bus/errors.ts';
import { budgetHeaders, type Budget, type RateLimit } from '../rate-limit.ts';
import { callerOf } from '../auth/caller.ts';

export function refuse(ctx: Context, budget: Budget, message: string): ServiceError {
  ctx.set(budgetHeaders(budget));
  return new ServiceError(429, 'rate_limited', `${message}; retry in ${Math.max(1, budget.resetSeconds)} s`);
}

/**
 * Spends `points` of the caller's `limit`, or refuses the request (429) before it reaches the
 * bus. An accepted request keeps the headers of the request budget; only a refusal names this one.
 */
export async function spend(ctx: Context, limit: RateLimit, what: string, points = 1): Promise<void> {
  const budget = await limit.take(callerOf(ctx).user, points);
  if (!budget.allowed) throw refuse(ctx, budget, `at most ${budget.limit} ${what} per user`);
}

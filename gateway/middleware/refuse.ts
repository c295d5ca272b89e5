// A request over one of its budgets: 429, the RateLimit-* headers of that budget and Retry-After.
import type { Context } from 'koa';
import { ServiceError } from '../../bus/errors.ts';
import { budgetHeaders, type Budget } from '../rate-limit.ts';

export function refuse(ctx: Context, budget: Budget, message: string): ServiceError {
  ctx.set(budgetHeaders(budget));
  return new ServiceError(429, 'rate_limited', `${message}; retry in ${Math.max(1, budget.resetSeconds)} s`);
}

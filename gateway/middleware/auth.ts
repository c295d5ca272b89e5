// Every request needs a valid bearer token; the caller it stands for goes into ctx.state.
// Each caller has a request budget, and each client address a budget of failed
// authentications, so that tokens cannot be guessed at speed. Every answer carries the
// RateLimit-* headers of the budget it was counted against.
import type { Context, Next } from 'koa';
import { ServiceError } from '../../bus/errors.ts';
import { bearerToken, type Authenticator } from '../auth/authenticator.ts';
import { budgetHeaders, type Budget, type RateLimit } from '../rate-limit.ts';

export interface RequestLimits {
  perUser: RateLimit;
  authFailuresPerAddress: RateLimit;
}

export function auth(authenticator: Authenticator, limits: RequestLimits) {
  return async (ctx: Context, next: Next): Promise<void> => {
    // An address past its failures is refused before its token is even looked at: a guesser
    // must not learn that a guess was right.
    const failures = await limits.authFailuresPerAddress.peek(ctx.ip);
    if (!failures.allowed) throw refuse(ctx, failures, 'too many requests with a missing or invalid token from this address');
    const token = bearerToken(ctx.get('Authorization'));
    const caller = token ? await authenticator.authenticate(token) : undefined;
    if (!caller) {
      const failed = await limits.authFailuresPerAddress.take(ctx.ip);
      if (!failed.allowed) throw refuse(ctx, failed, 'too many requests with a missing or invalid token from this address');
      ctx.set(budgetHeaders(failed));
      ctx.set('WWW-Authenticate', 'Bearer');
      throw new ServiceError(401, 'unauthorized', token ? 'the bearer token is not valid' : 'an Authorization: Bearer <token> header is required');
    }
    const budget = await limits.perUser.take(caller.user);
    if (!budget.allowed) throw refuse(ctx, budget, `at most ${budget.limit} requests per ${budget.windowSeconds} s per user`);
    ctx.set(budgetHeaders(budget));
    ctx.state.caller = caller;
    await next();
  };
}

function refuse(ctx: Context, budget: Budget, message: string): ServiceError {
  ctx.set(budgetHeaders(budget));
  return new ServiceError(429, 'rate_limited', `${message}; retry in ${Math.max(1, budget.resetSeconds)} s`);
}

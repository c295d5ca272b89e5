// Every request needs a valid bearer token; the caller it stands for goes into ctx.state.
// Each caller has a request budget, and each client address a budget of failed
// authentications. Only failures are counted and refused: a valid token passes from any
// address, so clients behind one NAT or proxy cannot lock each other out with bad tokens.
// Guessing is hopeless anyway (a token of the tokens file or a JWT signature is far too long
// to guess); the failure budget bounds what a client sending bad tokens costs. Every answer
// carries the RateLimit-* headers of the budget it was counted against.
import type { Context, Next } from 'koa';
import { ServiceError } from '../../bus/errors.ts';
import { bearerToken, type Authenticator } from '../auth/authenticator.ts';
import type { ClientAddresses } from '../client-address.ts';
import { budgetHeaders, type RateLimit } from '../rate-limit.ts';
import { refuse } from './refuse.ts';

export interface RequestLimits {
  perUser: RateLimit;
  authFailuresPerAddress: RateLimit;
}

export function auth(authenticator: Authenticator, limits: RequestLimits, addresses: ClientAddresses) {
  return async (ctx: Context, next: Next): Promise<void> => {
    const token = bearerToken(ctx.get('Authorization'));
    const identity = token ? await authenticator.authenticate(token) : undefined;
    if (!identity) {
      const failed = await limits.authFailuresPerAddress.take(addresses.of(ctx.req));
      if (!failed.allowed) throw refuse(ctx, failed, 'too many requests with a missing or invalid token from this address');
      ctx.set(budgetHeaders(failed));
      ctx.set('WWW-Authenticate', 'Bearer');
      throw new ServiceError(401, 'unauthorized', token ? 'the bearer token is not valid' : 'an Authorization: Bearer <token> header is required');
    }
    const { caller } = identity;
    // Set before the budget is taken: a refusal is held per caller (hold-refusals.ts).
    ctx.state.caller = caller;
    const budget = await limits.perUser.take(caller.user);
    if (!budget.allowed) throw refuse(ctx, budget, `at most ${budget.limit} requests per ${budget.windowSeconds} s per user`);
    ctx.set(budgetHeaders(budget));
    await next();
  };
}

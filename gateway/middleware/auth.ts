// Every request needs a valid bearer token; the caller it stands for goes into ctx.state.
import type { Context, Next } from 'koa';
import { ServiceError } from '../../bus/errors.ts';
import { bearerToken, type Authenticator } from '../auth/authenticator.ts';

export function auth(authenticator: Authenticator) {
  return async (ctx: Context, next: Next): Promise<void> => {
    const token = bearerToken(ctx.get('Authorization'));
    const caller = token ? await authenticator.authenticate(token) : undefined;
    if (!caller) {
      ctx.set('WWW-Authenticate', 'Bearer');
      throw new ServiceError(401, 'unauthorized', token ? 'the bearer token is not valid' : 'an Authorization: Bearer <token> header is required');
    }
    ctx.state.caller = caller;
    await next();
  };
}

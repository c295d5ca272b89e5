// Who made the request: set by the authentication middleware (middleware/auth.ts) before any
// route or budget reads it.
import type { Context } from 'koa';
import type { Caller } from '../../bus/contracts/session.ts';

export const callerOf = (ctx: Context): Caller => ctx.state.caller as Caller;

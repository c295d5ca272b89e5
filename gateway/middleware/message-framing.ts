// A request's body is framed by Content-Length or by the chunked transfer coding, nothing else.
// A request that names any other transfer coding, or none (an empty Transfer-Encoding), cannot
// be framed: the bytes after its head could be read as a further request on the same connection
// while this one is already acting.
// Such a request is refused before anything acts on it, and its connection closed (RFC 9112,
// section 6.1).
import type { Context, Next } from 'koa';
import { badRequest } from '../../bus/errors.ts';

export async function messageFraming(ctx: Context, next: Next): Promise<void> {
  const coding = ctx.req.headers['transfer-encoding'];
  if (coding !== undefined && coding.trim().toLowerCase() !== 'chunked') {
    ctx.res.once('finish', () => ctx.req.socket.destroy());
    const message = 'only the chunked transfer coding is understood';
    throw badRequest('invalid_header', `header.transfer-encoding: ${message}`, [{ field: 'header.transfer-encoding', message }]);
  }
  await next();
}

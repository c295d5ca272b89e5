// Request bodies are JSON only and at most the configured size (413 beyond). The parsed body
// goes into ctx.state.body, its size in bytes into ctx.state.bodyBytes; a request without a
// body leaves them undefined.
import type { Context, Next } from 'koa';
import getRawBody from 'raw-body';
import { ServiceError, badRequest } from '../../bus/errors.ts';

export function jsonBody(limitBytes: number) {
  const tooLarge = () => new ServiceError(413, 'payload_too_large', `the body is larger than ${limitBytes} bytes`);
  return async (ctx: Context, next: Next): Promise<void> => {
    const length = Number(ctx.get('Content-Length') || 0);
    const chunked = /chunked/i.test(ctx.get('Transfer-Encoding'));
    if (!length && !chunked) return next();
    if (length > limitBytes) throw tooLarge();
    if (!ctx.is('application/json')) {
      throw badRequest('unsupported_content_type', 'the body must be JSON, sent with Content-Type: application/json');
    }
    let text: string;
    try {
      text = await getRawBody(ctx.req, { limit: limitBytes, length: length || undefined, encoding: 'utf8' });
    } catch (error) {
      if ((error as { type?: string }).type === 'entity.too.large') throw tooLarge();
      throw badRequest('invalid_body', 'the body could not be read');
    }
    try {
      ctx.state.body = JSON.parse(text);
      ctx.state.bodyBytes = Buffer.byteLength(text);
    } catch (error) {
      throw badRequest('invalid_json', `the body is not valid JSON: ${(error as Error).message}`);
    }
    await next();
  };
}

// The gateway's HTTP server. A client that sends what is not HTTP, headers too large, or resets
// its connection before its request is parsed gets a plain status when its socket can still
// take one, a debug log line, and costs nothing else.
import { createServer, type Server } from 'node:http';
import type Koa from 'koa';
import type { Logger } from '../bus/log.ts';

const STATUS_LINES: Record<string, string> = {
  HPE_HEADER_OVERFLOW: '431 Request Header Fields Too Large',
  ERR_HTTP_REQUEST_TIMEOUT: '408 Request Timeout',
};

export function createHttpServer(app: Koa, log: Logger): Server {
  const server = createServer(app.callback());
  server.keepAliveTimeout = 65_000;
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    log.debug({ err: error }, 'http client error');
    if (!socket.writable || error.code === 'ECONNRESET') return socket.destroy();
    socket.end(`HTTP/1.1 ${STATUS_LINES[error.code ?? ''] ?? '400 Bad Request'}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
  });
  return server;
}

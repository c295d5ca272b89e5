// The gateway's HTTP server. A client that sends what is not HTTP, headers too large, or resets
// its connection before its request is parsed gets a plain status when its socket can still
// take one, a debug log line, and costs nothing else; one that names an expectation the server
// does not know is answered by the API like any other.
import { createServer, type Server } from 'node:http';
import type Koa from 'koa';
import type { Logger } from '../bus/log.ts';

const STATUS_LINES: Record<string, string> = {
  HPE_HEADER_OVERFLOW: '431 Request Header Fields Too Large',
  ERR_HTTP_REQUEST_TIMEOUT: '408 Request Timeout',
};

export function createHttpServer(app: Koa, log: Logger): Server {
  const handle = app.callback();
  const server = createServer(handle);
  // An Expect other than 100-continue is ignored, as RFC 9110 allows, and the request served as
  // any other. Node's own answer, a bare 417 before the body is read, closes the connection on
  // a body still arriving, and the client can lose that answer in the reset.
  server.on('checkExpectation', handle);
  server.keepAliveTimeout = 65_000;
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    log.debug({ err: error }, 'http client error');
    if (!socket.writable || error.code === 'ECONNRESET') return socket.destroy();
    socket.end(`HTTP/1.1 ${STATUS_LINES[error.code ?? ''] ?? '400 Bad Request'}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
  });
  return server;
}

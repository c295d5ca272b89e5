// The ceiling the gateway is measured against: a Koa app with one route that answers a fixed
// JSON document, with nothing in between. Usage: bare-koa.ts <port> '<json>'.
import { createServer } from 'node:http';
import Koa from 'koa';

const port = Number(process.argv[2]);
const document: unknown = JSON.parse(process.argv[3] ?? '{}');

const app = new Koa();
app.use((ctx) => {
  ctx.body = document;
});
const server = createServer(app.callback());
server.keepAliveTimeout = 65_000;
server.listen(port, '127.0.0.1', () => console.log(`bare koa listening on ${port}`));
process.once('SIGTERM', () => process.exit(0));

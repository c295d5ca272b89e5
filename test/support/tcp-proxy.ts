// A TCP proxy on loopback in front of a server. Each connection it takes is paired with one to
// the server, and `pipe` decides what passes between them (by default everything; a test's fault
// may drop a request or an answer); when either side of a pair closes, so does the other. It can
// cut one process alone off (its connections reset, new ones refused) and let it back, while
// everyone else reaches the server directly.
import { createServer, connect, type Server, type Socket } from 'node:net';
import { freePort } from '../../ops/stack/ports.ts';

export interface TcpProxy {
  port: number;
  /** Resets every connection through it and refuses new ones until restore(). */
  cut(): Promise<void>;
  /** Takes connections again; nothing when it does already. */
  restore(): Promise<void>;
  close(): Promise<void>;
}

const passAll = (client: Socket, upstream: Socket) => void client.pipe(upstream).pipe(client);

export async function startTcpProxy(
  target: { host: string; port: number },
  pipe: (client: Socket, upstream: Socket) => void = passAll,
): Promise<TcpProxy> {
  const port = await freePort();
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  const listen = () => new Promise<void>((resolve, reject) => {
    if (server) return resolve();
    server = createServer((client) => {
      const upstream = connect(target.port, target.host);
      for (const socket of [client, upstream]) {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
        socket.on('error', () => {});
      }
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
      pipe(client, upstream);
    });
    server.once('error', (error) => {
      server = undefined;
      reject(error);
    });
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const stop = async () => {
    const closing = new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    for (const socket of sockets) socket.resetAndDestroy();
    await closing;
    server = undefined;
  };
  await listen();
  return { port, cut: stop, restore: listen, close: stop };
}

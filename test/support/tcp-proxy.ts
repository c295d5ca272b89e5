// A TCP proxy on loopback between one process and a server, to cut that process alone off
// (its connections reset, new ones refused) and let it back, while everyone else reaches the
// server directly.
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

export async function startTcpProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpProxy> {
  const port = await freePort();
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  const listen = () => new Promise<void>((resolve, reject) => {
    if (server) return resolve();
    server = createServer((client) => {
      const upstream = connect(targetPort, targetHost);
      for (const socket of [client, upstream]) {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
        socket.on('error', () => {});
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
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

// Loopback ports: free ones for servers started on the fly, and whether one accepts connections.
// A free port is released before the caller binds it: another process may take it meanwhile
// (rare on one machine), but this process never hands the same one out twice.
import { createSocket } from 'node:dgram';
import { connect, createServer } from 'node:net';

// Ports already handed out by this process: the OS may offer a released port again before the
// caller it was given to has bound it (a test file asks for several before starting anything).
const handedOut = new Set<number>();

export async function freePort(): Promise<number> {
  for (;;) {
    const port = await unboundPort();
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    return port;
  }
}

function unboundPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export function freeUdpPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = createSocket('udp4');
    socket.once('error', reject);
    socket.bind(0, '127.0.0.1', () => {
      const { port } = socket.address();
      socket.close(() => resolve(port));
    });
  });
}

export function portOpen(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

// Loopback ports: free ones for servers started on the fly, and whether one accepts connections.
// A free port is released before the caller binds it: another process may take it meanwhile
// (rare on one machine), but this process never hands the same one out twice.
import { createSocket } from 'node:dgram';
import { readFileSync } from 'node:fs';
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

/**
 * A free port below the range the OS picks free and outgoing ports from, for a server that is
 * killed and started again on it: while it is down, no other process is handed its port (a
 * test's ClickHouse took a shard's port during its 90 s away).
 */
export async function steadyPort(): Promise<number> {
  const [osFirst] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
  const [low, high] = [10_000, Math.min(osFirst ?? 32_768, 32_768) - 1];
  if (high <= low) return freePort();
  for (;;) {
    const port = low + Math.floor(Math.random() * (high - low));
    if (handedOut.has(port) || !(await unboundPort(port).then(() => true, () => false))) continue;
    handedOut.add(port);
    return port;
  }
}

function unboundPort(wanted = 0): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(wanted, '127.0.0.1', () => {
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

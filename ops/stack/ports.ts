// Loopback ports for servers the tests and benchmarks start on the fly, and whether one accepts
// connections.
//
// A port is handed out unbound and the caller binds it later, often in a child process and
// seconds later (a gateway starts after its storage service and hosts). Two things could take it
// meanwhile. An outgoing connection: the OS gives those local ports from its ephemeral range, so
// ports are picked below that range (and above those fetch() refuses). Another test file
// running in parallel: each port handed out is claimed by a file naming the claiming process,
// so no other process on this machine hands it out while that process lives, even while a
// server on it is killed and started again.
import { createSocket } from 'node:dgram';
import { mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const CLAIMS = join(tmpdir(), 'emotion-analysis-ports');
// Above every port the Fetch standard bars ("bad ports", 10080 the highest): fetch() refuses them.
const LOWEST = 10_100;

export async function freePort(): Promise<number> {
  const { low, high } = portRange();
  mkdirSync(CLAIMS, { recursive: true });
  for (;;) {
    const port = low + Math.floor(Math.random() * (high + 1 - low));
    if (!claim(port)) continue;
    if (await bindable(port)) return port;
    release(port);
  }
}

/** The ports freePort picks from: [low, high], below the OS's ephemeral range. */
export function portRange(): { low: number; high: number } {
  const [first] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
  return { low: LOWEST, high: (first && first > LOWEST + 1000 ? first : 32_768) - 1 };
}

/** True if this process now holds the port's claim: it was unclaimed, or its claimant has exited. */
function claim(port: number): boolean {
  const file = join(CLAIMS, String(port));
  try {
    writeFileSync(file, String(process.pid), { flag: 'wx' });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  // A claim being written reads empty, and one released meanwhile is gone: neither is taken.
  const claimant = Number(readOrEmpty(file));
  if (!(claimant > 0) || alive(claimant)) return false;
  try {
    unlinkSync(file);
    writeFileSync(file, String(process.pid), { flag: 'wx' });
    return true;
  } catch {
    return false;
  }
}

function release(port: number): void {
  try {
    unlinkSync(join(CLAIMS, String(port)));
  } catch {
    // already gone
  }
}

function readOrEmpty(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
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

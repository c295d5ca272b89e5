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
import { processAlive } from '../../bus/process-alive.ts';

const CLAIMS = join(tmpdir(), 'emotion-analysis-ports');
// Above every port the Fetch standard bars ("bad ports", 10080 the highest): fetch() refuses them.
const LOWEST = 10_100;

export async function freePort(): Promise<number> {
  const { low, high } = portRange();
  mkdirSync(CLAIMS, { recursive: true });
  for (;;) {
    const port = low + Math.floor(Math.random() * (high + 1 - low));
    if (!claimPort(CLAIMS, port)) continue;
    if (await bindable(port)) return port;
    release(port);
  }
}

/** The ports freePort picks from: [low, high], below the OS's ephemeral range. */
export function portRange(): { low: number; high: number } {
  const [first] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
  return { low: LOWEST, high: (first && first > LOWEST + 1000 ? first : 32_768) - 1 };
}

/** True if this process now holds the port's claim in `claims`: it was unclaimed, or its claimant has exited. */
export function claimPort(claims: string, port: number): boolean {
  const file = join(claims, String(port));
  if (create(file)) return true;
  // A claim being written reads empty, and one released meanwhile is gone: neither is taken.
  const claimant = Number(readOrEmpty(file));
  if (!(claimant > 0) || processAlive(claimant)) return false;
  // Taking over is two steps, remove then create, so it is done under a lock of its own: without
  // it, a process that read the same dead claimant could remove the claim another had just
  // written in its place, and both would hold the port. (A process that dies holding the lock
  // leaves that one port unclaimable; the lock is held for microseconds.)
  const lock = `${file}.takeover`;
  if (!create(lock)) return false;
  try {
    if (Number(readOrEmpty(file)) !== claimant) return false;
    remove(file);
    return create(file);
  } finally {
    remove(lock);
  }
}

/** True if this process created `file`, naming itself; false if it exists. */
function create(file: string): boolean {
  try {
    writeFileSync(file, String(process.pid), { flag: 'wx' });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return false;
  }
}

function release(port: number): void {
  remove(join(CLAIMS, String(port)));
}

function remove(file: string): void {
  try {
    unlinkSync(file);
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

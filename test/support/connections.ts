// The TCP ports a process is connected to, read from /proc: which server of a cluster a service
// talks to right now, without asking the service.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

const ESTABLISHED = '01';

/** Remote ports of the process's established TCP connections (IPv4 and IPv6). */
export function connectedPorts(pid: number): number[] {
  const sockets = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    const target = safely(() => readlinkSync(`/proc/${pid}/fd/${fd}`));
    const inode = /^socket:\[(\d+)\]$/.exec(target ?? '')?.[1];
    if (inode) sockets.add(inode);
  }
  const ports: number[] = [];
  for (const table of ['tcp', 'tcp6']) {
    const lines = safely(() => readFileSync(`/proc/${pid}/net/${table}`, 'utf8'))?.split('\n').slice(1) ?? [];
    for (const line of lines) {
      // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
      const fields = line.trim().split(/\s+/);
      if (fields[3] !== ESTABLISHED || !sockets.has(fields[9] ?? '')) continue;
      ports.push(parseInt(fields[2]!.split(':').at(-1)!, 16));
    }
  }
  return ports;
}

function safely<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    // the descriptor closed, or the table is absent (no IPv6)
    return undefined;
  }
}

// The ffmpeg processes pulling a stream into an actor host's analysis sockets, found by their
// command line: which host analyses a session right now. A host starts its ffmpeg through its
// decoder spawner (actors/ingest/spawner-process.ts): the host is the ffmpeg's grandparent.
import { execFileSync } from 'node:child_process';

export interface Puller {
  pid: number;
  /** The actor host that started it: its parent's parent. */
  host: number;
}

export function pullersOf(uri: string): Puller[] {
  const rows = execFileSync('ps', ['-eo', 'pid=,ppid=,args='], { encoding: 'utf8' })
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [pid, ppid] = line.trim().split(/\s+/).map(Number);
      return { pid: pid as number, ppid: ppid as number, line };
    });
  const parents = new Map(rows.map((row) => [row.pid, row.ppid]));
  return rows
    .filter(({ line }) => line.includes(` -i ${uri} `) && line.includes(' unix:'))
    .map(({ pid, ppid }) => ({ pid, host: parents.get(ppid) ?? 0 }));
}

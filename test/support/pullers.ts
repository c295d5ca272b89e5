// The ffmpeg processes pulling a session's stream into an actor host's analysis sockets, found
// by their command line, which names the session where the URI would be (the URI itself never
// is: actors/ingest/stream-address.ts): which host analyses a session right now. A host starts
// its ffmpeg through its decoder spawner (actors/ingest/spawner-process.ts): the host is the
// ffmpeg's grandparent.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { STREAM_PLACEHOLDER_PREFIX } from '../../actors/ingest/stream-address.ts';

/** What a decoder's `-i` starts with for a session's stream. */
export function placeholderOf(session: string): string {
  return `${STREAM_PLACEHOLDER_PREFIX}${session}:`;
}

export interface Puller {
  pid: number;
  /** The actor host that started it: its parent's parent. */
  host: number;
}

export function pullersOf(session: string): Puller[] {
  const rows = execFileSync('ps', ['-eo', 'pid=,ppid=,args='], { encoding: 'utf8' })
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [pid, ppid] = line.trim().split(/\s+/).map(Number);
      return { pid: pid as number, ppid: ppid as number, line };
    });
  const parents = new Map(rows.map((row) => [row.pid, row.ppid]));
  return rows
    .filter(({ line }) => line.includes(` -i ${placeholderOf(session)}`) && line.includes(' unix:'))
    .map(({ pid, ppid }) => ({ pid, host: parents.get(ppid) ?? 0 }));
}

/**
 * The ffmpeg processes pulling `session`'s stream that descend from process `ancestor` (an actor
 * host), however deep: a host may start its decoders through a spawner process of its own.
 */
export function pullersUnder(session: string, ancestor: number): number[] {
  const parents = new Map<number, number>();
  const pulling: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // comm may hold spaces and parentheses: the fields after its closing one are fixed.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(Number(entry), ppid);
      const args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (basename(args[0] ?? '') === 'ffmpeg' && args.some((arg) => arg.startsWith(placeholderOf(session)))) pulling.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  const descends = (pid: number): boolean => {
    for (let at = parents.get(pid); at !== undefined && at > 1; at = parents.get(at)) if (at === ancestor) return true;
    return false;
  };
  return pulling.filter(descends);
}

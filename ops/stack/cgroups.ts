// Control groups (cgroup v2) that a local cluster's servers start in, one a server, so that a
// test can cut off everything a server sends, not only what is sent to it: iptables matches a
// packet to the cgroup of the process whose socket sent it (`-m cgroup --path`), whichever
// connection it belongs to, its answers and its own connections to ZooKeeper included. A server
// must start in its group: a socket belongs to the group its process was in when it made it.
//
// Groups are named `emo-stack-<pid>-<random>-<name>` after the process that made them; a run that was
// killed leaves empty ones, which the next run removes (removeOrphanCgroups).
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';
import { processAlive } from '../../bus/process-alive.ts';

const PREFIX = 'emo-stack-';

/** Where cgroup v2 is mounted, if it is and this process may make groups there. */
function cgroupRoot(): string | undefined {
  const mount = readFileSync('/proc/self/mounts', 'utf8').split('\n')
    .map((line) => line.split(' '))
    .find((fields) => fields[2] === 'cgroup2');
  return mount?.[1];
}

export interface Cgroup {
  /** Its folder: a process joins by writing its pid to `cgroup.procs` there. */
  dir: string;
  /** Its path below the cgroup2 root, as iptables' `--path` takes it. */
  path: string;
  /** Removes it; its processes must have ended. */
  remove(): void;
}

/** A group for the server `name`, or undefined where cgroup v2 cannot be used. */
export function makeCgroup(name: string): Cgroup | undefined {
  const root = cgroupRoot();
  if (!root) return undefined;
  // A random part: two clusters of one process name their servers alike.
  const path = `${PREFIX}${process.pid}-${randomBytes(3).toString('hex')}-${name}`;
  const dir = join(root, path);
  try {
    mkdirSync(dir, { recursive: true });
  } catch {
    return undefined;
  }
  return {
    dir,
    path,
    remove: () => {
      try {
        rmdirSync(dir);
      } catch {
        // still holds a process, or gone already
      }
    },
  };
}

/** Removes the empty groups of runs that are gone; returns how many. */
export function removeOrphanCgroups(): number {
  const root = cgroupRoot();
  if (!root) return 0;
  let removed = 0;
  for (const name of readdirSync(root).filter((entry) => entry.startsWith(PREFIX))) {
    if (processAlive(Number(name.slice(PREFIX.length).split('-')[0]))) continue;
    try {
      rmdirSync(join(root, name));
      removed++;
    } catch {
      // a process of it still runs
    }
  }
  return removed;
}

// CPU time of the processes a benchmark started, grouped by kind, read from /proc. Each process
// is classified by its parent chain: a process registered as a root is its root's kind, a
// descendant of a root takes the root's `descendants` kind (the actor host's ffmpeg and ffprobe
// children), and anything else under this benchmark process is "load" (the RTMP server, probes).
// The table is sampled every second, because a process that exits between two readings is gone
// from /proc with its CPU time: sampling loses at most its last second.
import { readdirSync, readFileSync } from 'node:fs';

export interface Root<Kind extends string> {
  self: Kind;
  descendants: Kind;
}

/** CPU seconds per kind so far, and the machine's busy CPU seconds (every process, anyone's). */
export interface CpuReading {
  at: number;
  /** Per process (pid and start time, so a reused pid is another process): kind and CPU seconds. */
  processes: Map<string, { kind: string; seconds: number }>;
  machineBusySeconds: number;
}

interface ProcStat {
  pid: number;
  ppid: number;
  start: string;
  seconds: number;
}

// USER_HZ: the kernel reports process times in ticks of 1/100 s on every Linux architecture
// this runs on (sysconf(_SC_CLK_TCK), which `getconf CLK_TCK` prints).
const TICKS_PER_SECOND = 100;
const SAMPLE_MS = 1000;

export class ProcessCpu<Kind extends string> {
  private readonly roots = new Map<number, Root<Kind>>();
  private readonly latest = new Map<string, { kind: string; seconds: number }>();
  private readonly timer: NodeJS.Timeout;

  /** `load` is the kind of this process's other descendants, `self` of this process itself. */
  constructor(private readonly kinds: { self: Kind; load: Kind }) {
    this.timer = setInterval(() => this.sample(), SAMPLE_MS);
    this.timer.unref();
  }

  watch(pid: number, root: Root<Kind>): void {
    this.roots.set(pid, root);
  }

  /** A fresh reading of every process seen so far (the last sample of those that exited). */
  read(): CpuReading {
    this.sample();
    return { at: performance.now(), processes: new Map(this.latest), machineBusySeconds: machineBusySeconds() };
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private sample(): void {
    const table = new Map<number, ProcStat>();
    for (const stat of readProcessTable()) table.set(stat.pid, stat);
    for (const stat of table.values()) {
      const kind = this.kindOf(stat, table);
      if (kind) this.latest.set(`${stat.pid}:${stat.start}`, { kind, seconds: stat.seconds });
    }
  }

  private kindOf(stat: ProcStat, table: Map<number, ProcStat>): Kind | undefined {
    if (stat.pid === process.pid) return this.kinds.self;
    const own = this.roots.get(stat.pid);
    if (own) return own.self;
    for (let parent = table.get(stat.ppid); parent; parent = table.get(parent.ppid)) {
      const root = this.roots.get(parent.pid);
      if (root) return root.descendants;
      if (parent.pid === process.pid) return this.kinds.load;
    }
    return undefined;
  }
}

/** CPU seconds per kind between two readings, and the machine's busy seconds not ours. */
export function cpuBetween(before: CpuReading, after: CpuReading): { wallSeconds: number; byKind: Map<string, number>; othersSeconds: number } {
  const byKind = new Map<string, number>();
  let ours = 0;
  for (const [key, { kind, seconds }] of after.processes) {
    // A process born after `before` started from zero.
    const used = seconds - (before.processes.get(key)?.seconds ?? 0);
    byKind.set(kind, (byKind.get(kind) ?? 0) + used);
    ours += used;
  }
  const machine = after.machineBusySeconds - before.machineBusySeconds;
  return { wallSeconds: (after.at - before.at) / 1000, byKind, othersSeconds: Math.max(0, machine - ours) };
}

function readProcessTable(): ProcStat[] {
  const stats: ProcStat[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      stats.push(parseStat(readFileSync(`/proc/${name}/stat`, 'utf8')));
    } catch {
      // exited between the listing and the read
    }
  }
  return stats;
}

// The command name, field 2, is in parentheses and may hold spaces and parentheses itself:
// the fields that follow start after the last ')'.
function parseStat(text: string): ProcStat {
  const pid = Number(text.slice(0, text.indexOf(' ')));
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // After the name: state(3) ppid(4) ... utime(14) stime(15) ... starttime(22), numbered as in proc(5).
  const field = (n: number) => fields[n - 3] ?? '';
  return { pid, ppid: Number(field(4)), start: field(22), seconds: (Number(field(14)) + Number(field(15))) / TICKS_PER_SECOND };
}

// user nice system idle iowait irq softirq steal (guest time is already inside user).
function machineBusySeconds(): number {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '';
  const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
  return [user, nice, system, irq, softirq, steal].reduce((sum: number, value) => sum + (value ?? 0), 0) / TICKS_PER_SECOND;
}

// Whether the cores have room for one more test file now. Files side by side mostly wait on
// servers and live streams, so more of them than two a core finish the suite sooner on a
// machine with cores to spare; where the cores are already busy, one more only slows every file
// down and adds the work that waiting under load costs (polls, retries). The room is read from
// the kernel each second: the share of the machine's CPU time that was busy (/proc/stat), and,
// in a control group held to a CPU quota (a container's, or ops/bench/slower-machine.ts), the
// share of the time its quota held the group back (cpu.stat).
import { readFileSync } from 'node:fs';

/** Busy and total CPU time of the whole machine, in ticks: the `cpu` line of /proc/stat. */
export function machineTicks(procStat: string): { busy: number; total: number } {
  const line = procStat.split('\n').find((candidate) => candidate.startsWith('cpu '));
  if (!line) throw new Error('no cpu line in /proc/stat');
  // user nice system idle iowait irq softirq steal (guest time is already counted in user).
  const [user, nice, system, idle, iowait, irq, softirq, steal] = line.trim().split(/\s+/).slice(1, 9).map(Number) as number[];
  const busy = user! + nice! + system! + irq! + softirq! + (steal ?? 0);
  return { busy, total: busy + idle! + iowait! };
}

/** Nanoseconds a group was held back by its quota, from its cpu.stat (cgroup v1 or v2). */
export function throttledNs(cpuStat: string): number {
  const v1 = /^throttled_time (\d+)$/m.exec(cpuStat);
  if (v1) return Number(v1[1]);
  const v2 = /^throttled_usec (\d+)$/m.exec(cpuStat);
  return v2 ? Number(v2[1]) * 1000 : 0;
}

/** The cpu.stat of the group this process is in, from /proc/self/cgroup: the v1 cpu controller's, else v2's. */
export function cpuStatPath(selfCgroup: string, root = '/sys/fs/cgroup'): string | undefined {
  const lines = selfCgroup.split('\n').map((line) => line.split(':'));
  const v1 = lines.find(([, controllers]) => controllers?.split(',').includes('cpu'));
  if (v1) return `${root}/${v1[1]}${v1.slice(2).join(':')}/cpu.stat`.replace(/\/+/g, '/');
  const v2 = lines.find(([id, controllers]) => id === '0' && controllers === '');
  return v2 ? `${root}/${v2.slice(2).join(':')}/cpu.stat`.replace(/\/+/g, '/') : undefined;
}

interface Sample {
  at: number;
  busy: number;
  total: number;
  throttled: number;
}

/** Of the time between two samples, the share the cores were busy and the share the quota held the group back. */
export function loadBetween(older: Sample, newer: Sample): { busy: number; throttled: number } {
  const ticks = newer.total - older.total;
  const wallNs = (newer.at - older.at) * 1e6;
  return {
    busy: ticks > 0 ? (newer.busy - older.busy) / ticks : 0,
    throttled: wallNs > 0 ? (newer.throttled - older.throttled) / wallNs : 0,
  };
}

// Two lanes a core keep the cores about 60 % busy over a run: the files side by side leave gaps,
// and a file started in one costs the others little. At 90 % a file started now would wait on
// the cores rather than beside the others (docs/testing.md has the runs that chose it).
const BUSY_SHARE = 0.9;
// Held back a tenth of the time: the quota, not the cores, is what the files wait for.
const THROTTLED_SHARE = 0.1;
const WINDOW_MS = 5000;
const SAMPLE_MS = 1000;

function readIfThere(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

export class CpuRoom {
  private readonly samples: Sample[] = [];
  private readonly statPath = cpuStatPath(readIfThere('/proc/self/cgroup'));
  private readonly timer: NodeJS.Timeout;

  constructor() {
    this.sample();
    this.timer = setInterval(() => this.sample(), SAMPLE_MS).unref();
  }

  /** True when, over the last few seconds, the cores were not busy and no quota held the group back. */
  hasRoom(): boolean {
    const [older, newer] = [this.samples[0], this.samples.at(-1)];
    if (!older || !newer || older === newer) return false;
    const load = loadBetween(older, newer);
    return load.busy < BUSY_SHARE && load.throttled < THROTTLED_SHARE;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  // A machine whose load cannot be read never has room: its extra lanes stay idle.
  private sample(): void {
    const stat = readIfThere('/proc/stat');
    if (!stat.startsWith('cpu ')) return;
    const { busy, total } = machineTicks(stat);
    // No cpu.stat to read: no quota known to hold the group back.
    const throttled = this.statPath ? throttledNs(readIfThere(this.statPath)) : 0;
    const at = Date.now();
    this.samples.push({ at, busy, total, throttled });
    while (this.samples.length > 1 && at - this.samples[0]!.at > WINDOW_MS) this.samples.shift();
  }
}

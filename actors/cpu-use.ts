// The CPU a host uses, in cores, averaged over its load window: the process (its analysis
// threads included) and every process below it, read from /proc: its decoder spawner and the
// decoders that starts (ffmpeg, ffprobe), which are the host's grandchildren.
// This is what a session costs once it runs; a new one is covered by a reservation until then.
//
// Read synchronously, every second: /proc's files are made in memory as they are read, and a
// host has some twenty threads whose children files are read each time. Through promises the
// reads were about a third of an idle host's CPU.
import { readFileSync, readdirSync } from 'node:fs';
import { statCpuSeconds } from './proc-stat.ts';

interface Sample {
  at: number;
  /** CPU seconds used so far by the process, and by the children seen so far. */
  cpuSeconds: number;
}

export class CpuUse {
  private readonly samples: Sample[] = [];
  /** Each live descendant's CPU seconds at the last sample: its use counts from when it was first seen. */
  private children = new Map<number, number>();
  private childSeconds = 0;

  constructor(private readonly windowMs: number) {}

  /** Takes a sample; called about once a second. */
  sample(): void {
    const now = performance.now();
    const { user, system } = process.cpuUsage();
    const seen = descendantCpuSeconds();
    for (const [pid, seconds] of seen) this.childSeconds += seconds - (this.children.get(pid) ?? seconds);
    this.children = seen;
    this.samples.push({ at: now, cpuSeconds: (user + system) / 1e6 + this.childSeconds });
    while (this.samples.length > 2 && this.samples[1]!.at <= now - this.windowMs) this.samples.shift();
  }

  /** Cores used over the window (0 until two samples). */
  cores(): number {
    const first = this.samples[0];
    const last = this.samples[this.samples.length - 1];
    if (!first || !last || last.at === first.at) return 0;
    return (last.cpuSeconds - first.cpuSeconds) / ((last.at - first.at) / 1000);
  }
}

function descendantCpuSeconds(): Map<number, number> {
  const cpu = new Map<number, number>();
  for (let parents: (number | 'self')[] = ['self']; parents.length > 0;) {
    const pids = parents.flatMap(childrenOf);
    for (const pid of pids) {
      const stat = readOrEmpty(`/proc/${pid}/stat`);
      if (stat) cpu.set(pid, statCpuSeconds(stat));
    }
    parents = pids;
  }
  return cpu;
}

/** The children of each of its threads (a child belongs to the thread that started it). */
function childrenOf(pid: number | 'self'): number[] {
  let threads: string[];
  try {
    threads = readdirSync(`/proc/${pid}/task`);
  } catch {
    return []; // it has ended
  }
  return threads.flatMap((tid) => readOrEmpty(`/proc/${pid}/task/${tid}/children`).split(' ').filter(Boolean).map(Number));
}

/** A /proc file's text, or '' once its process or thread has ended. */
function readOrEmpty(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

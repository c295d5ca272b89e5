// The CPU a host uses, in cores, averaged over its load window: the process (its analysis
// threads included) and every process below it, read from /proc: its decoder spawner and the
// decoders that starts (ffmpeg, ffprobe), which are the host's grandchildren.
// This is what a session costs once it runs; a new one is covered by a reservation until then.
import { readFile, readdir } from 'node:fs/promises';
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
  async sample(): Promise<void> {
    const now = performance.now();
    const { user, system } = process.cpuUsage();
    const seen = await descendantCpuSeconds();
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

async function descendantCpuSeconds(): Promise<Map<number, number>> {
  const cpu = new Map<number, number>();
  for (let parents: (number | 'self')[] = ['self']; parents.length > 0;) {
    const pids = (await Promise.all(parents.map(childrenOf))).flat();
    await Promise.all(
      pids.map(async (pid) => {
        const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
        if (stat) cpu.set(pid, statCpuSeconds(stat));
      }),
    );
    parents = pids;
  }
  return cpu;
}

/** The children of each of its threads (a child belongs to the thread that started it). */
async function childrenOf(pid: number | 'self'): Promise<number[]> {
  const threads = await readdir(`/proc/${pid}/task`).catch(() => []);
  const lists = await Promise.all(threads.map((tid) => readFile(`/proc/${pid}/task/${tid}/children`, 'utf8').catch(() => '')));
  return lists.flatMap((list) => list.split(' ').filter(Boolean).map(Number));
}

// A model thread's CPU time shared among the streams it serves, by the work each gave it: about
// once a second the thread's own CPU seconds since the last share-out (/proc/thread-self) are
// split in proportion to each stream's work units (samples, pixels, model time) in that time.
const SHARE_MS = 1000;

export class CpuShares {
  private work = new Map<number, number>();
  private cpuBefore: number;

  constructor(
    private readonly cpuSeconds: () => number,
    private readonly share: (stream: number, seconds: number) => void,
  ) {
    this.cpuBefore = cpuSeconds();
    setInterval(() => this.shareOut(), SHARE_MS).unref();
  }

  /** The stream gave the thread `units` of work. */
  worked(stream: number, units: number): void {
    if (units > 0) this.work.set(stream, (this.work.get(stream) ?? 0) + units);
  }

  private shareOut(): void {
    const cpu = this.cpuSeconds();
    const spent = cpu - this.cpuBefore;
    // No /proc/thread-self: nothing to share, and the next reading is no better.
    if (!Number.isFinite(spent)) return;
    this.cpuBefore = cpu;
    let total = 0;
    for (const units of this.work.values()) total += units;
    if (total > 0 && spent > 0) for (const [stream, units] of this.work) this.share(stream, (spent * units) / total);
    this.work = new Map();
  }
}

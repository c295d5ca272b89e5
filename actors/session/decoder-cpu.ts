// The CPU a session's decoder (its ffmpeg) spends, read from /proc about once a second while it
// runs and reported as it grows: the decoder's part of what the session costs (session-cost.ts).
import { readFile } from 'node:fs/promises';
import { statCpuSeconds } from '../proc-stat.ts';

const SAMPLE_MS = 1000;

export class DecoderCpu {
  private readonly timer: NodeJS.Timeout;
  private pid: number | undefined;
  private seen = 0;

  /** `pid`: the decoder's process id once it runs; `spent`: told each increase, in CPU seconds. */
  constructor(
    private readonly currentPid: () => number | undefined,
    private readonly spent: (seconds: number) => void,
  ) {
    this.timer = setInterval(() => void this.sample(), SAMPLE_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private async sample(): Promise<void> {
    const pid = this.currentPid();
    if (pid === undefined) return;
    if (pid !== this.pid) {
      this.pid = pid;
      this.seen = 0;
    }
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
    if (stat === undefined) return;
    const total = statCpuSeconds(stat);
    if (!(total > this.seen)) return;
    this.spent(total - this.seen);
    this.seen = total;
  }
}

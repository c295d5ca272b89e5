// An OTP-style supervisor for one child. A child that crashes is restarted after a backoff
// that doubles with each crash; more than `intensity` crashes within `periodMs` means the
// failure is not transient, and the supervisor gives up and escalates to its owner.
import { setTimeout as sleep } from 'node:timers/promises';

export interface Child {
  /** Resolves when the child ends normally; rejects when it crashes. */
  readonly done: Promise<void>;
  stop(): Promise<void>;
}

export interface SupervisorOptions {
  intensity: number;
  periodMs: number;
  backoffMs: number;
  maxBackoffMs: number;
  onRestart?(error: unknown, restarts: number): void;
}

export const DEFAULT_SUPERVISION: SupervisorOptions = {
  intensity: 5,
  periodMs: 60_000,
  backoffMs: 500,
  maxBackoffMs: 10_000,
};

export class Supervisor {
  private child?: Child;
  private stopping = false;
  private readonly crashes: number[] = [];
  /** Resolves when the child ended normally or was stopped; rejects with the last error on escalation. */
  readonly done: Promise<void>;

  constructor(
    private readonly startChild: () => Child,
    private readonly options: SupervisorOptions = DEFAULT_SUPERVISION,
  ) {
    this.done = this.run();
  }

  get restarts(): number {
    return this.crashes.length;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.child?.stop();
    await this.done.catch(() => {});
  }

  private async run(): Promise<void> {
    for (;;) {
      try {
        this.child = this.startChild();
        await this.child.done;
        return;
      } catch (error) {
        if (this.stopping) return;
        const now = Date.now();
        this.crashes.push(now);
        const recent = this.crashes.filter((at) => now - at <= this.options.periodMs).length;
        if (recent > this.options.intensity) throw error;
        this.options.onRestart?.(error, this.crashes.length);
        const backoff = Math.min(this.options.backoffMs * 2 ** (recent - 1), this.options.maxBackoffMs);
        await sleep(backoff);
        if (this.stopping) return;
      }
    }
  }
}

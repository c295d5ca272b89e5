// The one restart policy of the project, OTP-style, for one child: a session's stream worker
// in an actor host, or a service process under `npm start` and `npm run cluster`. A child that
// crashes is restarted after a backoff that doubles with each crash within `periodMs`
// (backoff.ts); more than `intensity` crashes within `periodMs` means the failure is not
// transient, and the supervisor gives up and escalates to its owner. A child that ends normally
// is not restarted.
import { setTimeout as sleep } from 'node:timers/promises';
import { backoffMs } from './backoff.ts';

export interface Child {
  /** Resolves when the child ends normally; rejects when it crashes. */
  readonly done: Promise<void>;
  /** Ends the child: gracefully, and by force once `graceMs` have passed. */
  stop(graceMs: number): Promise<void>;
}

/** Time as the supervisor sees it: replaceable, so that its policy can be tested without waiting. */
export interface Clock {
  now(): number;
  /** Resolves after `ms`, or at once when `signal` aborts. */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

export interface SupervisorOptions {
  intensity: number;
  periodMs: number;
  backoffMs: number;
  maxBackoffMs: number;
  /** How long a stopped child may take to end gracefully before it is ended by force. */
  shutdownMs: number;
  onRestart?(error: unknown, restarts: number): void;
  clock?: Clock;
}

export const DEFAULT_SUPERVISION: SupervisorOptions = {
  intensity: 5,
  periodMs: 60_000,
  backoffMs: 500,
  maxBackoffMs: 10_000,
  shutdownMs: 5000,
};

const realClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) => sleep(ms, undefined, { signal }).catch(() => {}),
};

export class Supervisor {
  private child?: Child;
  private readonly stopping = new AbortController();
  private readonly crashes: number[] = [];
  private readonly clock: Clock;
  /** Resolves when the child ended normally or was stopped; rejects with the last error on escalation. */
  readonly done: Promise<void>;

  constructor(
    private readonly startChild: () => Child,
    private readonly options: SupervisorOptions = DEFAULT_SUPERVISION,
  ) {
    this.clock = options.clock ?? realClock;
    this.done = this.run();
  }

  get restarts(): number {
    return this.crashes.length;
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    await this.child?.stop(this.options.shutdownMs);
    await this.done.catch(() => {});
  }

  private async run(): Promise<void> {
    const { signal } = this.stopping;
    for (;;) {
      try {
        this.child = this.startChild();
        await this.child.done;
        return;
      } catch (error) {
        if (signal.aborted) return;
        const now = this.clock.now();
        this.crashes.push(now);
        const recent = this.crashes.filter((at) => now - at <= this.options.periodMs).length;
        if (recent > this.options.intensity) throw error;
        this.options.onRestart?.(error, this.crashes.length);
        const backoff = backoffMs(recent - 1, { baseMs: this.options.backoffMs, maxMs: this.options.maxBackoffMs });
        await this.clock.sleep(backoff, signal);
        if (signal.aborted) return;
      }
    }
  }
}

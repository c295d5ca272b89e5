// What one session costs its host, in cores: the CPU of its decoder (ffmpeg) and its shares of
// the host's face, voice and transcription threads (each thread apportions its own CPU time
// among the streams it served), averaged over the load window. This is the figure the host
// admits by, holds each session to, and shows in the session's `meta.cpuCores`.

export const COST_PARTS = ['decoder', 'face', 'voice', 'speech'] as const;
export type CostPart = (typeof COST_PARTS)[number];

interface Spent {
  at: number;
  seconds: number;
}

export class SessionCost {
  private readonly spent: Spent[] = [];
  private readonly openedAt: number;
  /** When media started flowing: the session's steady cost is measured from then on. */
  private workingSince: number | undefined;
  private over = false;
  private readonly budgetWatchers = new Set<(over: boolean) => void>();

  constructor(
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.openedAt = now();
  }

  /** The session's media flows (its first working state; later ones change nothing). */
  working(): void {
    this.workingSince ??= this.now();
  }

  /** `seconds` of CPU spent on the session just now, by one of its parts. */
  add(seconds: number): void {
    if (!(seconds > 0)) return;
    this.spent.push({ at: this.now(), seconds });
    this.expire();
  }

  /** Whether the session has been measured working for a whole window. */
  get measured(): boolean {
    return this.workingSince !== undefined && this.now() - this.workingSince >= this.windowMs;
  }

  /** When it will have been, at the soonest: a window after media started, or from now while it has not. */
  measuredAt(): number {
    return (this.workingSince ?? this.now()) + this.windowMs;
  }

  /**
   * Cores used over the window, or since the session opened when that is shorter (at least a
   * second, so a burst in its first moments does not read as many cores).
   */
  cores(): number {
    this.expire();
    const span = Math.max(1000, Math.min(this.windowMs, this.now() - this.openedAt));
    let seconds = 0;
    for (const spent of this.spent) seconds += spent.seconds;
    return seconds / (span / 1000);
  }

  /** Whether the host holds the session over its budget (its own effort must come down). */
  get overBudget(): boolean {
    return this.over;
  }

  setOverBudget(over: boolean): void {
    if (over === this.over) return;
    this.over = over;
    for (const watcher of this.budgetWatchers) watcher(over);
  }

  /** Calls `watcher` with each change of overBudget; returns how to stop. */
  watchBudget(watcher: (over: boolean) => void): () => void {
    this.budgetWatchers.add(watcher);
    return () => this.budgetWatchers.delete(watcher);
  }

  private expire(): void {
    const oldest = this.now() - this.windowMs;
    while (this.spent.length > 0 && this.spent[0]!.at <= oldest) this.spent.shift();
  }
}

// Holds each session to its budget: one session may cost the host cores / HOST_CAPACITY, the
// heaviest stream it is sized for. A session measured over it is told so (SessionCost
// .overBudget) and brings its own face effort down first, before any other stream's
// (face-effort.ts); it is never the host's whole effort, or its admissions, that pays for it.
// Its cost is seen in its `meta.cpuCores` and in emo_session_cpu_cores.
import type { Logger } from '../bus/log.ts';
import type { SessionCost } from './session-cost.ts';

/**
 * Over the budget by more than this share, a session is over; back under it by this share,
 * it is within again. The gap keeps a session at the edge from flipping every second.
 */
const OVER_BY = 0.1;
const WITHIN_BY = 0.2;
/** How often each session's cost is observed for the metric: once per window. */
const OBSERVE_EVERY_MS = 10_000;

export interface SessionBudgetsOptions {
  /** Cores one session may cost. */
  budgetCores: number;
  log: Logger;
  /** Told each measured session's cost, in cores, once per window. */
  observe(cores: number): void;
  now?: () => number;
}

export class SessionBudgets {
  private lastObserved = 0;

  constructor(private readonly options: SessionBudgetsOptions) {}

  /** Called about once a second with the host's sessions. */
  review(costs: ReadonlyMap<string, SessionCost>): void {
    const { budgetCores, log, observe } = this.options;
    const now = (this.options.now ?? Date.now)();
    const observing = now - this.lastObserved >= OBSERVE_EVERY_MS;
    if (observing) this.lastObserved = now;
    for (const [session, cost] of costs) {
      // A session still warming up holds its reservation: its cost is judged once measured.
      if (!cost.measured) continue;
      const cores = cost.cores();
      if (observing) observe(cores);
      const over = cost.overBudget ? cores > budgetCores * (1 - WITHIN_BY) : cores > budgetCores * (1 + OVER_BY);
      if (over === cost.overBudget) continue;
      cost.setOverBudget(over);
      const figures = { session, cpuCores: Math.round(cores * 1000) / 1000, budgetCores: Math.round(budgetCores * 1000) / 1000 };
      if (over) log.warn(figures, 'session over its budget: its own face effort comes down');
      else log.info(figures, 'session within its budget again');
    }
  }
}

// Holds each session to its budget: one session may cost the host SESSION_BUDGET_CORES (by
// default cores / HOST_CAPACITY, the heaviest stream it is sized for). A session measured over
// it is told so (SessionCost.overBudget) and brings its own face effort down first, before any
// other stream's (face-effort.ts); it is never the host's whole effort, or its admissions, that
// pays for it. A session that stays far over it even so (its decoding alone, which no effort
// lowers: a stream of many more frames a second than a camera sends, say) is stopped with its
// own reason, `cost_exceeded`, rather than hold the room of several sessions. Its cost is seen
// in its `meta.cpuCores` and in emo_session_cpu_cores.
import type { Logger } from '../bus/log.ts';
import type { SessionCost } from './session-cost.ts';

/**
 * Over the budget by more than this share, a session is over; back under it by this share,
 * it is within again. The gap keeps a session at the edge from flipping every second.
 */
const OVER_BY = 0.1;
const WITHIN_BY = 0.2;
/**
 * Past this many budgets for `stopAfterSeconds` without a break, a session is stopped. Its face effort
 * is at its floor within seconds of going over, so what is left is its own. Far enough above the
 * budget that the heaviest stream the service takes is never stopped on a slow day: a 1080p
 * stream at 60 fps decodes in 0.25 cores here, about 0.45 on a day this machine decodes 1.8 times
 * slower, against 0.6 on two cores sized for 10 (ops/bench/README-capacity.md, "What a session may cost").
 */
const STOP_PAST_BUDGETS = 3;
/** How often each session's cost is observed for the metric: once per window. */
const OBSERVE_EVERY_MS = 10_000;

export interface SessionBudgetsOptions {
  /** Cores one session may cost. */
  budgetCores: number;
  /** How long a session may stay past STOP_PAST_BUDGETS before it is stopped. */
  stopAfterSeconds: number;
  log: Logger;
  /** Told each measured session's cost, in cores, once per window. */
  observe(cores: number): void;
  /** Stops a session that stayed far over its budget; `detail` says by how much, for its record. */
  stop(session: string, detail: string): void;
  now?: () => number;
}

export class SessionBudgets {
  private lastObserved = 0;
  /** Since when each session has been past STOP_PAST_BUDGETS without a break. */
  private readonly farOverSince = new Map<string, number>();
  private readonly stopped = new Set<string>();

  constructor(private readonly options: SessionBudgetsOptions) {}

  /** Called about once a second with the host's sessions. */
  review(costs: ReadonlyMap<string, SessionCost>): void {
    const { budgetCores, log, observe } = this.options;
    const now = (this.options.now ?? Date.now)();
    const observing = now - this.lastObserved >= OBSERVE_EVERY_MS;
    if (observing) this.lastObserved = now;
    for (const session of [...this.farOverSince.keys(), ...this.stopped]) {
      if (!costs.has(session)) this.forget(session);
    }
    for (const [session, cost] of costs) {
      // A session still warming up holds its reservation: its cost is judged once measured.
      if (!cost.measured) continue;
      const cores = cost.cores();
      if (observing) observe(cores);
      this.judgeStop(session, cores, now);
      const over = cost.overBudget ? cores > budgetCores * (1 - WITHIN_BY) : cores > budgetCores * (1 + OVER_BY);
      if (over === cost.overBudget) continue;
      cost.setOverBudget(over);
      const figures = { session, cpuCores: round(cores), budgetCores: round(budgetCores) };
      if (over) log.warn(figures, 'session over its budget: its own face effort comes down');
      else log.info(figures, 'session within its budget again');
    }
  }

  private judgeStop(session: string, cores: number, now: number): void {
    const { budgetCores, stopAfterSeconds, log, stop } = this.options;
    if (cores <= budgetCores * STOP_PAST_BUDGETS) {
      this.farOverSince.delete(session);
      return;
    }
    const since = this.farOverSince.get(session) ?? now;
    this.farOverSince.set(session, since);
    if (now - since < stopAfterSeconds * 1000 || this.stopped.has(session)) return;
    this.stopped.add(session);
    const detail = `the session cost ${round(cores)} cores, over ${STOP_PAST_BUDGETS} times its budget of ${round(budgetCores)}, for ${stopAfterSeconds} s with its face effort lowered`;
    log.warn({ session, cpuCores: round(cores), budgetCores: round(budgetCores) }, 'session stopped: it stayed far over its budget');
    stop(session, detail);
  }

  private forget(session: string): void {
    this.farOverSince.delete(session);
    this.stopped.delete(session);
  }
}

const round = (cores: number) => Math.round(cores * 1000) / 1000;

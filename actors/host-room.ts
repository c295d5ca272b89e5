// Whether a host has room for one more session, and if not, when it expects to. Capacity is
// CPU: the host's cores, of which one session may take cores / HOST_CAPACITY (its budget: the
// heaviest stream the host is sized for). What the host uses is measured (cpu-use.ts), and so
// is what each of its sessions costs (session-cost.ts). A session not yet measured for a whole
// window may still turn out to be the heaviest, so it is charged its budget until then, less
// what it has already shown of its cost (that is in the measured load already: charging both
// would count a warming session twice). A host admits while that leaves some of its cores free,
// it holds fewer than HOST_CAPACITY sessions, and it is not behind (host-load.ts). The last
// session admitted may take it past its cores by less than one budget, which the measured load
// then shows; a session that grows past its budget is held to it by its own effort, not by
// anyone else's (host.ts).

export interface UnmeasuredSession {
  /** What it has cost so far, in cores (part of the host's measured load). */
  cores: number;
  /** When it will have been measured for a whole window (SessionCost.measuredAt). */
  measuredAt: number;
}

export interface HostState {
  cores: number;
  /** HOST_CAPACITY: sessions of the heaviest stream the host is sized for. */
  capacity: number;
  /** Sessions the host runs, and creates it is admitting. */
  sessions: number;
  /** Cores the host and its decoders used, averaged over the last window. */
  measuredCores: number;
  /** Sessions (and creates) not yet measured for a whole window. */
  unmeasured: readonly UnmeasuredSession[];
  /** Milliseconds until the host may keep up again, or 0 while it keeps up (HostLoad). */
  behindForMs: number;
  /** How long the measured load needs to reflect a change: the window. */
  windowMs: number;
  now: number;
}

export type Room = { fits: true } | { fits: false; retryAfterMs: number };

/** The cores held back for sessions whose cost is not known yet, beyond what they have shown. */
export function reservedCores(budget: number, unmeasured: readonly UnmeasuredSession[]): number {
  return unmeasured.reduce((sum, session) => sum + Math.max(0, budget - session.cores), 0);
}

export function roomFor(state: HostState): Room {
  const { cores, capacity, sessions, measuredCores, unmeasured, behindForMs, windowMs, now } = state;
  const budget = cores / capacity;
  const over = measuredCores + reservedCores(budget, unmeasured) - cores;
  if (behindForMs === 0 && sessions < capacity && over < 0) return { fits: true };
  // Cores come free as unmeasured sessions are measured (their reservation ends): the soonest
  // moment enough have been. If that never suffices (or the host holds HOST_CAPACITY
  // sessions), the load itself must change, which the window shows at the soonest.
  let waitMs = 0;
  if (over >= 0 || sessions >= capacity) {
    waitMs = windowMs;
    if (sessions < capacity) {
      let freed = 0;
      for (const session of [...unmeasured].sort((a, b) => a.measuredAt - b.measuredAt)) {
        freed += Math.max(0, budget - session.cores);
        if (over - freed < 0) {
          waitMs = session.measuredAt - now;
          break;
        }
      }
    }
  }
  return { fits: false, retryAfterMs: Math.max(1000, behindForMs, waitMs) };
}

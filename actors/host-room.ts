// Whether a host has room for one more session, and if not, when it expects to. Capacity is
// CPU: the host's cores, of which the heaviest stream it is sized for takes cores / HOST_CAPACITY
// (the capacity benchmark's figure). A host admits a new session while its measured load
// (cpu-use.ts) plus its reservations (reservations.ts) leave some of its cores free, it holds
// fewer than HOST_CAPACITY sessions, and it keeps up (host-load.ts). The last session admitted
// may take it past its cores by less than one heaviest session, which the load signal then sees.

export interface HostState {
  cores: number;
  /** HOST_CAPACITY: sessions of the heaviest stream the host is sized for. */
  capacity: number;
  sessions: number;
  /** Cores the host and its decoders used, averaged over the last window. */
  measuredCores: number;
  /** When each held reservation is expected to end, soonest first (Reservations.expectedEnds). */
  reservationEnds: number[];
  /** Milliseconds until the host may keep up again, or 0 while it keeps up (HostLoad). */
  behindForMs: number;
  /** How long the measured load needs to reflect a change: the window. */
  windowMs: number;
  now: number;
}

export type Room = { fits: true } | { fits: false; retryAfterMs: number };

export function roomFor(state: HostState): Room {
  const { cores, capacity, sessions, measuredCores, reservationEnds, behindForMs, windowMs, now } = state;
  const cost = cores / capacity;
  const over = measuredCores + reservationEnds.length * cost - cores;
  if (behindForMs === 0 && sessions < capacity && over < 0) return { fits: true };
  // How many reservations must end before some cores are free beside the measured load; if
  // more than are held (or at HOST_CAPACITY sessions), the load itself must change, which the
  // window shows at the soonest.
  const mustEnd = over < 0 ? 0 : Math.floor(over / cost) + 1;
  const byReservations = mustEnd > 0 && mustEnd <= reservationEnds.length ? reservationEnds[mustEnd - 1]! - now : windowMs;
  const waitMs = Math.max(behindForMs, mustEnd > 0 || sessions >= capacity ? byReservations : 0);
  return { fits: false, retryAfterMs: Math.max(1000, waitMs) };
}

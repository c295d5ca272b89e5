// What a host has promised to sessions whose cost it has not measured yet. A new session may
// turn out to be the heaviest stream the host is sized for, and its CPU shows in the host's
// measured load (cpu-use.ts) only once it has been analysed for about a window: until then it
// holds a reservation of that heaviest cost. The reservation ends when the session has been
// working (media analysed) for a whole window, or the moment it stops, fails or is refused.

export class Reservation {
  /** When media started flowing; the measurement window starts then. */
  workingSince: number | undefined;
  released = false;
}

export class Reservations {
  private readonly held = new Set<Reservation>();

  constructor(
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  reserve(): Reservation {
    const reservation = new Reservation();
    this.held.add(reservation);
    return reservation;
  }

  /** The session's media flows: its cost is measured from now on. */
  working(reservation: Reservation): void {
    reservation.workingSince ??= this.now();
  }

  release(reservation: Reservation): void {
    reservation.released = true;
    this.held.delete(reservation);
  }

  /** How many are held now, once those measured for a whole window are let go. */
  count(): number {
    this.expire();
    return this.held.size;
  }

  /**
   * When each held reservation is expected to end, soonest first: a window after its media
   * started flowing, or for one still waiting for media, a window from now at the earliest.
   */
  expectedEnds(): number[] {
    this.expire();
    const now = this.now();
    return [...this.held].map(({ workingSince }) => (workingSince ?? now) + this.windowMs).sort((a, b) => a - b);
  }

  private expire(): void {
    const measuredBefore = this.now() - this.windowMs;
    for (const reservation of this.held) {
      if (reservation.workingSince !== undefined && reservation.workingSince <= measuredBefore) this.release(reservation);
    }
  }
}

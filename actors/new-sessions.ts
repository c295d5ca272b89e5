// Sessions a host took too recently for its load signal (HostLoad) to have judged them. That
// signal needs about its window of analysis to see what a session costs, so without a bound a
// burst of creates would all pass it and land on one host before it knew it was full. A host
// takes at most `limit` sessions within one window; each further create waits for the oldest to
// be seen (the gateway answers 503, or another host takes it).

export class NewSessions {
  /** Each recent claim, oldest first; a claim is its own object, so giving one back is exact. */
  private readonly claims: { at: number }[] = [];

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether one more may be taken now. */
  room(): boolean {
    this.expire();
    return this.claims.length < this.limit;
  }

  /**
   * Claims room for a session being created; undefined when there is none. The returned
   * function gives the room back, for a create that made no session: a refused or repeated
   * request must not hold off the next one.
   */
  claim(): (() => void) | undefined {
    if (!this.room()) return undefined;
    const claim = { at: this.now() };
    this.claims.push(claim);
    return () => {
      const index = this.claims.indexOf(claim);
      if (index >= 0) this.claims.splice(index, 1);
    };
  }

  private expire(): void {
    const oldest = this.now() - this.windowMs;
    while (this.claims.length && this.claims[0]!.at <= oldest) this.claims.shift();
  }
}

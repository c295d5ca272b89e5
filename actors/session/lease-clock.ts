// How long the session records have been writable without a break, as this host sees it. A
// host judges another's heartbeat too old only on time the owner could have used to write one:
// while the bucket has no leader (a NATS server lost, an election under way), or its leader has
// lost its quorum (this host's own heartbeats fail), nobody can beat, so the clock stops for
// everyone and restarts from zero once writes are possible again.
export class LeaseClock {
  private writableSince: number | undefined;

  /** `probe` succeeds only while the bucket can take writes (SessionRecords.writable). */
  constructor(private readonly probe: () => Promise<unknown>) {}

  /** Milliseconds the bucket has been writable without a break; 0 when it is not now. */
  async writableFor(now: () => number = Date.now): Promise<number> {
    try {
      await this.probe();
    } catch {
      this.writableSince = undefined;
      return 0;
    }
    const at = now();
    this.writableSince ??= at;
    return at - this.writableSince;
  }
}

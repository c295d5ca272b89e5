// How many of something each key (a user, a client address) holds at once in this gateway:
// WebSocket connections, requests in flight.
export class Counts {
  private readonly counts = new Map<string, number>();

  constructor(readonly limit: number) {}

  /** Counts one more for the key; false (and nothing counted) when at the limit. */
  acquire(key: string): boolean {
    const count = this.counts.get(key) ?? 0;
    if (count >= this.limit) return false;
    this.counts.set(key, count + 1);
    return true;
  }

  release(key: string): void {
    const count = (this.counts.get(key) ?? 0) - 1;
    if (count > 0) this.counts.set(key, count);
    else this.counts.delete(key);
  }
}

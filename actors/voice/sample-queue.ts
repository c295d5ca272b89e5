// Samples received and not yet analysed, oldest first, kept as the chunks they arrived in so
// that queueing costs no copy.
export class SampleQueue {
  private readonly chunks: Float32Array[] = [];
  /** Samples of the first chunk already taken. */
  private head = 0;
  private size = 0;

  get length(): number {
    return this.size;
  }

  /** Queues `samples`; the queue keeps the array, so the caller must not reuse it. */
  push(samples: Float32Array): void {
    if (samples.length === 0) return;
    this.chunks.push(samples);
    this.size += samples.length;
  }

  /** Moves the oldest `into.length` samples into `into`; throws if fewer are queued. */
  read(into: Float32Array): void {
    if (into.length > this.size) throw new RangeError(`${into.length} samples asked for, ${this.size} queued`);
    let filled = 0;
    while (filled < into.length) {
      const chunk = this.chunks[0]!;
      const take = Math.min(into.length - filled, chunk.length - this.head);
      into.set(chunk.subarray(this.head, this.head + take), filled);
      filled += take;
      this.advance(take);
    }
  }

  /** Forgets the oldest `count` samples (at most all of them); returns how many went. */
  drop(count: number): number {
    let left = Math.min(count, this.size);
    const dropped = left;
    while (left > 0) {
      const take = Math.min(left, this.chunks[0]!.length - this.head);
      this.advance(take);
      left -= take;
    }
    return dropped;
  }

  private advance(count: number): void {
    this.head += count;
    this.size -= count;
    if (this.head === this.chunks[0]!.length) {
      this.chunks.shift();
      this.head = 0;
    }
  }
}

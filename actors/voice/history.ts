/** The most recent samples of a stream, addressed by absolute sample index. */
export class AudioHistory {
  private readonly ring: Float32Array;
  private written = 0;

  constructor(capacity: number) {
    this.ring = new Float32Array(capacity);
  }

  write(samples: Float32Array): void {
    const capacity = this.ring.length;
    let source = samples.length > capacity ? samples.subarray(samples.length - capacity) : samples;
    this.written += samples.length - source.length;
    while (source.length > 0) {
      const at = this.written % capacity;
      const take = Math.min(source.length, capacity - at);
      this.ring.set(source.subarray(0, take), at);
      this.written += take;
      source = source.subarray(take);
    }
  }

  /** Moves past `count` samples that never arrived: they read as silence. */
  skip(count: number): void {
    const zeros = Math.min(count, this.ring.length);
    this.written += count - zeros;
    this.write(new Float32Array(zeros));
  }

  /** A copy of samples [start, end); throws if they are no longer (or not yet) held. */
  copy(start: number, end: number): Float32Array {
    const capacity = this.ring.length;
    if (start < this.written - capacity || end > this.written || start > end) {
      throw new RangeError(`samples ${start}..${end} are outside the history (${this.written - capacity}..${this.written})`);
    }
    const out = new Float32Array(end - start);
    const from = start % capacity;
    const first = Math.min(out.length, capacity - from);
    out.set(this.ring.subarray(from, from + first), 0);
    out.set(this.ring.subarray(0, out.length - first), first);
    return out;
  }
}

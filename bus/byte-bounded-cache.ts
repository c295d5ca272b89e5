// A least-recently-used cache bounded by the bytes of what it holds rather than by a count:
// records of one kind differ in size by a factor of forty (a bare record against one with 32
// long source names), so a bound by count is a bound on nothing. Each entry's size is given by
// its caller (the JSON size of the record, which it has at hand).
export class ByteBoundedCache<V> {
  /** Least recently used first. */
  private readonly entries = new Map<string, { value: V; bytes: number }>();
  private held = 0;

  constructor(readonly maxBytes: number) {}

  /** The value, now the most recently used. */
  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  /** The value, leaving the order as it is. */
  peek(key: string): V | undefined {
    return this.entries.get(key)?.value;
  }

  /** Holds `value` as the most recently used, then drops the least recently used past the bound. */
  set(key: string, value: V, bytes: number): void {
    this.delete(key);
    this.entries.set(key, { value, bytes });
    this.held += bytes;
    for (const [oldest, entry] of this.entries) {
      if (this.held <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.held -= entry.bytes;
    }
  }

  delete(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.held -= entry.bytes;
  }

  clear(): void {
    this.entries.clear();
    this.held = 0;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The bytes held, as the callers counted them. */
  get bytes(): number {
    return this.held;
  }
}

// Groups inference requests from every session of a host into fewer, larger model calls.
// Requests that arrive while a call runs wait and go together into the next one; an idle host
// runs a request at once, so batching costs no latency when there is nothing to batch.
export class Batcher<Item, Result> {
  private readonly waiting: { item: Item; resolve(result: Result): void; reject(error: unknown): void }[] = [];
  private running = false;
  /** Model calls made and items they carried, since start. */
  readonly stats = { calls: 0, items: 0 };

  constructor(
    /** Runs one call for a group; returns one result per item, in order. */
    private readonly run: (items: Item[]) => Promise<Result[]>,
    /** Whether `next` may join `group` (same input shape, size limits). */
    private readonly fits: (group: Item[], next: Item) => boolean,
  ) {}

  submit(item: Item): Promise<Result> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    if (this.running || !this.waiting.length) return;
    this.running = true;
    const group = [this.waiting.shift()!];
    for (let i = 0; i < this.waiting.length; ) {
      const next = this.waiting[i]!;
      if (this.fits(group.map((g) => g.item), next.item)) {
        group.push(next);
        this.waiting.splice(i, 1);
      } else {
        i++;
      }
    }
    const items = group.map((g) => g.item);
    this.run(items)
      .then(
        (results) => {
          this.stats.calls++;
          this.stats.items += items.length;
          group.forEach((g, i) => g.resolve(results[i] as Result));
        },
        (error: unknown) => group.forEach((g) => g.reject(error)),
      )
      .finally(() => {
        this.running = false;
        this.pump();
      });
  }
}

/** The parts one after another in one array: a batch input made of several requests' inputs. */
export function concat(parts: Float32Array[], length: number): Float32Array {
  const out = new Float32Array(length);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

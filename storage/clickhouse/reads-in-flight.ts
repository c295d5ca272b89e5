// The reads of each user being answered at once by this storage service, bounded below its read
// connections: one user's slow reads (deep pages that run until their deadline) take at most
// that many sockets, and the others' reads find one free. Past the bound a read is refused at
// once (429 with Retry-After) rather than queued behind the user's own.
//
// Each read runs at a ClickHouse priority (read-deadline.ts), and ClickHouse pauses a query
// while one of a higher priority runs: the reads of a user refused here lately rank below
// everyone else's, so a user flooding ClickHouse with heavy reads makes way for the others, and
// its reads run side by side when nobody else reads. The others share ClickHouse as equals:
// ranking a user's second read at once below anyone's first paused a dashboard's second read
// behind any other user's heavy first one, up to its deadline.
import { ServiceError } from '../../bus/errors.ts';
import type { CallContext } from '../../bus/rpc.ts';

/** ClickHouse priorities, 1 the higher: every user's reads, and those of a user refused lately. */
export const READS = 1;
export const FLOODER_READS = 2;
/** How long after its last refusal a user's reads run at FLOODER_READS. */
const FLOODER_FOR_MS = 10_000;

/** What a bounded read's handler is told: its deadline and its ClickHouse priority. */
export type ReadContext = CallContext & { priority: number };

export class ReadsInFlight {
  private readonly counts = new Map<string, number>();
  /** Users refused lately, and until when their reads rank last: only those of the last FLOODER_FOR_MS. */
  private readonly floodersUntil = new Map<string, number>();

  constructor(
    readonly perUser: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Runs the user's read within the bound, or refuses it; `read` is given its ClickHouse priority. */
  async run<T>(user: string, read: (priority: number) => Promise<T>): Promise<T> {
    const held = this.counts.get(user) ?? 0;
    if (held >= this.perUser) {
      this.flooded(user);
      throw new ServiceError(429, 'rate_limited', `at most ${this.perUser} reads per user at once on a storage service; retry in 1 s`, undefined, 1);
    }
    this.counts.set(user, held + 1);
    try {
      return await read(this.priorityOf(user));
    } finally {
      const left = (this.counts.get(user) ?? 1) - 1;
      if (left > 0) this.counts.set(user, left);
      else this.counts.delete(user);
    }
  }

  private priorityOf(user: string): number {
    const until = this.floodersUntil.get(user);
    if (until !== undefined && until > this.now()) return FLOODER_READS;
    if (until !== undefined) this.floodersUntil.delete(user);
    return READS;
  }

  private flooded(user: string): void {
    const now = this.now();
    // Kept in the order they lapse (a user refused again moves to the end): the lapsed lead.
    for (const [each, until] of this.floodersUntil) {
      if (until > now) break;
      this.floodersUntil.delete(each);
    }
    this.floodersUntil.delete(user);
    this.floodersUntil.set(user, now + FLOODER_FOR_MS);
  }

  /** The bus handler `handler`, each of its requests run within its caller's bound and told its priority. */
  bound<R extends { caller: { user: string } }, C, T>(handler: (request: R, context: C & { priority: number }) => Promise<T>) {
    return (request: R, context: C): Promise<T> => this.run(request.caller.user, (priority) => handler(request, { ...context, priority }));
  }
}

// The reads of each user being answered at once by this storage service, bounded below its read
// connections: one user's slow reads (deep pages that run until their deadline) take at most
// that many sockets, and the others' reads find one free. Past the bound a read is refused at
// once (429 with Retry-After) rather than queued behind the user's own.
//
// A user's first read at once runs at ClickHouse's highest priority, any more beside it at the
// next (read-deadline.ts): ClickHouse pauses a query while one of a higher priority runs, so
// one user's many heavy reads make way for everyone's first, and run side by side when nobody
// else reads. (Ranking each of a user's reads below its previous one made the user's own reads
// take turns: a flooding user alone got 17 % fewer answers, and some 503.)
import { ServiceError } from '../../bus/errors.ts';
import type { CallContext } from '../../bus/rpc.ts';

/** ClickHouse priorities, 1 the highest: a user's first read at once, and each one more beside it. */
export const FIRST_READ = 1;
export const MORE_READS = 2;

/** What a bounded read's handler is told: its deadline and its ClickHouse priority. */
export type ReadContext = CallContext & { priority: number };

export class ReadsInFlight {
  private readonly counts = new Map<string, number>();

  constructor(readonly perUser: number) {}

  /** Runs the user's read within the bound, or refuses it; `read` is given its ClickHouse priority. */
  async run<T>(user: string, read: (priority: number) => Promise<T>): Promise<T> {
    const held = this.counts.get(user) ?? 0;
    if (held >= this.perUser) {
      throw new ServiceError(429, 'rate_limited', `at most ${this.perUser} reads per user at once on a storage service; retry in 1 s`, undefined, 1);
    }
    this.counts.set(user, held + 1);
    try {
      return await read(held === 0 ? FIRST_READ : MORE_READS);
    } finally {
      const left = (this.counts.get(user) ?? 1) - 1;
      if (left > 0) this.counts.set(user, left);
      else this.counts.delete(user);
    }
  }

  /** The bus handler `handler`, each of its requests run within its caller's bound and told its priority. */
  bound<R extends { caller: { user: string } }, C, T>(handler: (request: R, context: C & { priority: number }) => Promise<T>) {
    return (request: R, context: C): Promise<T> => this.run(request.caller.user, (priority) => handler(request, { ...context, priority }));
  }
}

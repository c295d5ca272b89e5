// The reads of each user being answered at once by this storage service, bounded below its read
// connections: one user's slow reads (deep pages that run until their deadline) take at most
// that many sockets, and the others' reads find one free. Past the bound a read is refused at
// once (429 with Retry-After) rather than queued behind the user's own.
import { ServiceError } from '../../bus/errors.ts';

export class ReadsInFlight {
  private readonly counts = new Map<string, number>();

  constructor(readonly perUser: number) {}

  /** Runs the user's read within the bound, or refuses it. */
  async run<T>(user: string, read: () => Promise<T>): Promise<T> {
    const held = this.counts.get(user) ?? 0;
    if (held >= this.perUser) {
      throw new ServiceError(429, 'rate_limited', `at most ${this.perUser} reads per user at once on a storage service; retry in 1 s`, undefined, 1);
    }
    this.counts.set(user, held + 1);
    try {
      return await read();
    } finally {
      const left = (this.counts.get(user) ?? 1) - 1;
      if (left > 0) this.counts.set(user, left);
      else this.counts.delete(user);
    }
  }

  /** The bus handler `handler`, each of its requests run within its caller's bound. */
  bound<R extends { caller: { user: string } }, C, T>(handler: (request: R, context: C) => Promise<T>) {
    return (request: R, context: C): Promise<T> => this.run(request.caller.user, () => handler(request, context));
  }
}

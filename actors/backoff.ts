// The project's one doubling backoff: a session's worker reconnecting a dropped stream
// (session/worker.ts) and a supervisor restarting a crashed child (supervisor.ts) wait by it.
// The wait is a function of the retry's number, not kept state: the supervisor counts only its
// recent crashes, so a child that crashed long ago starts again from the first wait.

export interface Backoff {
  /** The wait before the first retry. */
  baseMs: number;
  /** The longest wait: doubling stops there. */
  maxMs: number;
}

/** The wait before retry `retry` (0 for the first): the base doubled `retry` times, at most the maximum. */
export function backoffMs(retry: number, { baseMs, maxMs }: Backoff): number {
  return Math.min(baseMs * 2 ** retry, maxMs);
}

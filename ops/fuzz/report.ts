// How a fuzz case reads in a failure report: as JSON, with long strings cut (the full case is
// replayed from the seed and path that fast-check prints).
import fc from 'fast-check';

const KEEP = 160;

export function describe(value: unknown): string {
  return JSON.stringify(value, (_, v: unknown) => (typeof v === 'string' && v.length > KEEP ? `${v.slice(0, KEEP)}... (${v.length} chars)` : v));
}

/** The case, printed by fast-check through `describe`. */
export function printable<T extends object>(value: T): T {
  return Object.defineProperty(value, fc.toStringMethod, { value: () => describe(value), enumerable: false });
}

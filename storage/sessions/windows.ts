// A page from one end of a sorted key range, read without sorting the whole range. ClickHouse
// (18.16 at least) does not stop reading at a LIMIT in key order: a page of a million sessions
// or events would read and group all of them. Instead the page is asked of a window at the
// chosen end of the range, sized from the range's density to hold the page, and doubled until
// it holds it or covers the whole range; the primary key confines each query to its window.

/** Where the candidate rows lie on the key, [lo, hi), and how densely. */
export interface Span {
  lo: number;
  hi: number;
  /**
   * Rows per unit of the key, an estimate (duplicates and older revisions count, filters are
   * not known): it only sizes the first window.
   */
  density: number;
}

/** The density of `rows` rows between the keys `first` and `last`. */
export const densityOf = (rows: number, first: number, last: number) => rows / Math.max(1, last - first);

export interface Window {
  lo: number;
  hi: number;
}

export async function pageFromEnd<T>(options: {
  span: Span;
  /** Which end the page starts from: `hi` for newest first. */
  from: 'lo' | 'hi';
  /** Rows the page needs to see: offset + limit + 1 (the one that tells hasMore). */
  wanted: number;
  /** The page within a window. */
  read: (window: Window) => Promise<T[]>;
  /** Whether a window's page is complete (it found the row past the page). */
  complete: (page: T[]) => boolean;
}): Promise<T[]> {
  const { span, from, wanted, read, complete } = options;
  const length = span.hi - span.lo;
  // A quarter more than the density asks for, so the first window usually suffices.
  let width = Math.min(length, (wanted * 1.25) / span.density);
  for (;;) {
    const window = from === 'hi'
      ? { lo: Math.max(span.lo, span.hi - width), hi: span.hi }
      : { lo: span.lo, hi: Math.min(span.hi, span.lo + width) };
    const page = await read(window);
    if (complete(page) || width >= length) return page;
    width *= 2;
  }
}

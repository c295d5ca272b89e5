// How numbers, times and states read on the page.

/** Seconds since the session's start as m:ss or h:mm:ss. */
export function clock(seconds) {
  const total = Math.max(0, Math.floor(seconds));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = String(total % 60).padStart(2, '0');
  return h ? `${h}:${String(m).padStart(2, '0')}:${s}` : `${m}:${s}`;
}

/** A length of time in words: 42 s, 3 min 5 s, 2 h 7 min. */
export function duration(seconds) {
  const total = Math.max(0, Math.round(seconds));
  if (total < 60) return `${total} s`;
  if (total < 3600) return `${Math.floor(total / 60)} min ${total % 60} s`;
  return `${Math.floor(total / 3600)} h ${Math.floor((total % 3600) / 60)} min`;
}

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

/** An ISO 8601 timestamp in the reader's own time zone. */
export function when(iso) {
  return iso ? dateTime.format(new Date(iso)) : '';
}

export const percent = (share) => `${Math.round(share * 100)} %`;

export const fixed = (value, digits = 1) => (value === null || value === undefined ? '' : value.toFixed(digits));

const WORDS = {
  client: 'stopped by the client',
  expired: 'reached its maximum length',
  resolution_exceeded: 'picture larger than 1080p; nothing analysed',
  stream_unreachable: 'the stream could not be reached',
  stream_too_fast: 'the stream kept arriving faster than real time',
  cost_exceeded: 'the stream cost far more to analyse than one session may',
  worker_failed: 'the analysis failed',
};

/** A stop reason in words. */
export const stopReason = (reason) => WORDS[reason] ?? reason;

/** Local midnight of a yyyy-mm-dd date input, plus `days`, as Unix milliseconds (what the list accepts). */
export function dayStart(value, days = 0) {
  if (!value) return undefined;
  const [y, m, d] = value.split('-').map(Number);
  return new Date(y, m - 1, d + days).getTime();
}

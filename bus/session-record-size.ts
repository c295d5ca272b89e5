// How large a session record can be, in bytes of its JSON: what the KV bucket stores and what
// the record caches count (bus/session-records.ts, storage/sessions/listed-changes.ts). The API's limits
// bound it: a stream URI of 2048 UTF-16 units (bus/stream-uri.ts), a name of 256
// (bus/contracts/session.ts) and up to SESSION_MAX_SOURCES (32) sources with names of 256
// (bus/contracts/events.ts). In JSON a unit takes at most 6 bytes (a control character,
// escaped as \u0001; the URI check refuses only white space and NUL) and a name's at most 3
// (names refuse control characters and lone surrogates, so the worst is a 3-byte UTF-8
// character). The caller's user and product come from the token and the failure text from
// the host: the record below gives them 256 and 512 characters, which real tokens and the
// host's fixed failure words stay far below; nothing in the contracts bounds them yet.
import type { SessionRecord } from './contracts/session.ts';

export const MAX_STREAM_URI_LENGTH = 2048;
export const MAX_NAME_LENGTH = 256;
export const MAX_SOURCES = 32;
const ASSUMED_IDENTITY_LENGTH = 256;
const ASSUMED_FAILURE_LENGTH = 512;
const ASSUMED_HOST_ID_LENGTH = 128;

/** The JSON size of largestSessionRecord(), rounded up to a KiB (test/unit/session-record-size.test.ts). */
export const LARGEST_SESSION_RECORD_BYTES = 44 * 1024;

/** The largest record the limits allow: every text at its longest, in its widest characters. */
export function largestSessionRecord(id = '0123456789abcdef01234567'): SessionRecord {
  const widest = (length: number) => '\uFFFF'.repeat(length);
  const big = Number.MAX_SAFE_INTEGER;
  const prefix = 'rtsp://h/';
  return {
    id,
    name: widest(MAX_NAME_LENGTH),
    type: 'live_analysis',
    state: 'finished',
    createdAt: big,
    finishedAt: big,
    user: widest(ASSUMED_IDENTITY_LENGTH),
    product: widest(ASSUMED_IDENTITY_LENGTH),
    streamUri: prefix + '\u0001'.repeat(MAX_STREAM_URI_LENGTH - prefix.length),
    sensors: Array.from({ length: MAX_SOURCES }, (_, i) => ({
      id: i.toString(16).padStart(24, '0'),
      name: widest(MAX_NAME_LENGTH),
      type: 'generic_sensor' as const,
      device: 'generic_sensor' as const,
      format: 'scalar' as const,
    })),
    owner: 'h'.repeat(ASSUMED_HOST_ID_LENGTH),
    expiresAt: big,
    healthCheckAt: big,
    workerState: 'reconnecting',
    stopReason: 'resolution_exceeded',
    failure: widest(ASSUMED_FAILURE_LENGTH),
    mediaSeconds: -1.2345678901234567e-100,
    cpuCores: 1.2345678901234567e-100,
    deletingSince: big,
  };
}

/** A record's size as the bucket and the caches count it. */
export const recordBytes = (json: string): number => Buffer.byteLength(json);

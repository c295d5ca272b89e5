// Which changes of the session records the index needs a row for: those a list shows, never a
// heartbeat, and nothing of a session being deleted (its rows are being purged). Telling a
// heartbeat needs what the index last got for the session, which the bucket no longer holds (it keeps one revision a key): the follower knows it when it wrote that
// row itself and no change has been delivered to another storage service since, which the
// consumer's delivery sequence shows (it counts every delivery, to whichever service). When in
// doubt it writes the row: a row too many costs a little space, a row too few lists a stale session.
//
// Of each row it keeps only what a list shows (its Listed digest, at most about 900 bytes of
// JSON: the name is the one text in it), in a cache bounded by those bytes: past it, the
// sessions indexed least lately are forgotten, and their next change is written.
import { ByteBoundedCache } from '../../bus/byte-bounded-cache.ts';
import type { SessionRecord } from '../../bus/contracts/session.ts';

/** Bytes of digests held by default: over 100,000 sessions of typical names, 18,000 of the longest. */
export const LISTED_CHANGES_BYTES = 16 * 1024 ** 2;

/** What a list shows of a record that a heartbeat may not change. */
export type Listed = Pick<SessionRecord, 'name' | 'state' | 'workerState' | 'stopReason' | 'mediaSeconds'> & { sensors: number };

export class ListedChanges {
  private lastDelivery = 0;
  /** Per session, what the last row this service wrote lists, least recently written first. */
  private readonly indexed: ByteBoundedCache<Listed>;

  constructor(maxBytes = LISTED_CHANGES_BYTES) {
    this.indexed = new ByteBoundedCache(maxBytes);
  }

  /**
   * Told every delivery in order: whether `record` (undefined: the session's record was deleted)
   * needs a row. `redelivered`: another service may have written it already, or rows after it.
   */
  needsRow(id: string, record: SessionRecord | undefined, delivery: number, redelivered: boolean): boolean {
    if (delivery !== this.lastDelivery + 1) this.indexed.clear();
    this.lastDelivery = delivery;
    const before = this.indexed.peek(id);
    this.indexed.delete(id);
    if (!record || record.deletingSince !== undefined) return false;
    if (redelivered) return true;
    const after = listed(record);
    const kept = before && !changesListing(before, after) ? before : after;
    this.indexed.set(id, kept, Buffer.byteLength(JSON.stringify(kept)));
    return kept === after;
  }

  /** Sessions remembered, and the bytes of their digests' JSON. */
  get held(): { sessions: number; bytes: number } {
    return { sessions: this.indexed.size, bytes: this.indexed.bytes };
  }
}

/** Of a record, or of the public record a row holds. */
export function listed({ name, state, workerState, stopReason, mediaSeconds, sensors }: Pick<SessionRecord, keyof Listed>): Listed {
  return { name, state, workerState, stopReason, mediaSeconds, sensors: sensors.length };
}

/**
 * Whether a change shows in a session list's filters or order, or in what the list shows that
 * the KV cache could not tell: heartbeats (healthCheck, mediaSeconds) do not; the media count
 * the owner adds to a finished session does: it is final, and so should the list's copy be.
 */
export function changesListing(before: Listed, after: Listed): boolean {
  return (
    before.name !== after.name ||
    before.state !== after.state ||
    before.workerState !== after.workerState ||
    before.stopReason !== after.stopReason ||
    before.sensors !== after.sensors ||
    (after.state !== 'active' && before.mediaSeconds !== after.mediaSeconds)
  );
}

// Which changes of the session records the index needs a row for: those a list shows, never a
// heartbeat, and nothing of a session being deleted (its rows are being purged). Telling a
// heartbeat needs what the index last got for the session, which the bucket no longer holds (it keeps one revision a key): the follower knows it when it wrote that
// row itself and no change has been delivered to another storage service since, which the
// consumer's delivery sequence shows (it counts every delivery, to whichever service). When in
// doubt it writes the row: a row too many costs a little space, a row too few lists a stale session.
import type { SessionRecord } from '../bus/contracts/session.ts';

// Sessions remembered at most: past it, the least recently indexed are forgotten (and written again).
const REMEMBERED = 100_000;

export class ListedChanges {
  private lastDelivery = 0;
  /** Per session, the record of the last row this service wrote, least recently written first. */
  private readonly indexed = new Map<string, SessionRecord>();

  /**
   * Told every delivery in order: whether `record` (undefined: the session's record was deleted)
   * needs a row. `redelivered`: another service may have written it already, or rows after it.
   */
  needsRow(id: string, record: SessionRecord | undefined, delivery: number, redelivered: boolean): boolean {
    if (delivery !== this.lastDelivery + 1) this.indexed.clear();
    this.lastDelivery = delivery;
    const before = this.indexed.get(id);
    this.indexed.delete(id);
    if (!record || record.deletingSince !== undefined) return false;
    if (redelivered) return true;
    if (before && !changesListing(before, record)) {
      this.indexed.set(id, before);
      return false;
    }
    this.indexed.set(id, record);
    if (this.indexed.size > REMEMBERED) this.indexed.delete(this.indexed.keys().next().value as string);
    return true;
  }
}

/**
 * Whether a change shows in a session list's filters or order, or in what the list shows that
 * the KV cache could not tell: heartbeats (healthCheck, mediaSeconds) do not; the media count
 * the owner adds to a finished session does: it is final, and so should the list's copy be.
 */
function changesListing(before: SessionRecord, after: SessionRecord): boolean {
  return (
    before.name !== after.name ||
    before.state !== after.state ||
    before.workerState !== after.workerState ||
    before.stopReason !== after.stopReason ||
    before.sensors.length !== after.sensors.length ||
    (after.state !== 'active' && before.mediaSeconds !== after.mediaSeconds)
  );
}

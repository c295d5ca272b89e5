// The fence against a stale owner. A host paused past the takeover (GC, a full disk, SIGSTOP,
// a network cut) may still publish rows once it runs again, for seconds the new owner analyses
// too. Every row an owner publishes carries its epoch (bus/subjects.ts rowHeaders), and a
// takeover starts a new one (actors/session/lifecycle.ts), so the writer tells them apart: a row
// of an older epoch is refused for the seconds from the moment the current epoch began. Its
// earlier seconds are the old owner's alone (nobody else pulled them) and are kept.
import type { SessionRecord } from '../../bus/contracts/session.ts';
import type { RowKind } from '../../bus/subjects.ts';

/**
 * Whether `row`, made in `rowEpoch` (undefined: made by no owner, such as a custom event, or by
 * a publisher older than epochs), is refused given the session's record.
 */
export function fenced(record: SessionRecord | undefined, rowEpoch: number | undefined, kind: RowKind, row: unknown): boolean {
  if (rowEpoch === undefined || !record || record.epochStartedAt === undefined) return false;
  if (rowEpoch >= (record.epoch ?? 0)) return false;
  const second = secondOf(kind, row);
  // Seconds count from the session's start (bus/contracts/rows.ts).
  return second !== undefined && second >= Math.floor((record.epochStartedAt - record.createdAt) / 1000);
}

/** The epoch a row message's header names, if any. */
export function epochOf(header: string | undefined): number | undefined {
  if (header === undefined || !/^\d+$/.test(header)) return undefined;
  return Number(header);
}

/** The second a row is about: its `second`, or when a speech segment starts. */
function secondOf(kind: RowKind, row: unknown): number | undefined {
  const fields = row as { second?: unknown; start?: unknown };
  const value = kind === 'speech' ? fields.start : fields.second;
  return typeof value === 'number' ? Math.floor(value) : undefined;
}

// What the writer accepts from the ROWS stream: rows of a known kind that match their contract
// and whose strings ClickHouse can store (no lone surrogates: they have no UTF-8 form). A row
// that fails is the publisher's bug or an attacker's: it is set aside, never inserted.
import type { TSchema } from '@sinclair/typebox';
import {
  AudioSecond,
  CustomEvent,
  FaceSecond,
  SpeechSegment,
  VideoSecond,
} from '../../bus/contracts/rows.ts';
import { ROW_KINDS, type RowKind } from '../../bus/subjects.ts';
import { checker } from '../../bus/validate.ts';

const CONTRACTS: Record<RowKind, TSchema> = {
  audio: AudioSecond,
  face: FaceSecond,
  video: VideoSecond,
  speech: SpeechSegment,
  event: CustomEvent,
};

export const isRowKind = (kind: string): kind is RowKind => (ROW_KINDS as readonly string[]).includes(kind);

/** Why the row cannot be stored, or undefined when it can. */
export function rowProblem(kind: RowKind, row: unknown): string | undefined {
  const check = checker(CONTRACTS[kind]);
  if (!check.Check(row)) {
    const first = check.Errors(row).First();
    return `not a ${kind} row: ${first ? `${first.path || '/'} ${first.message}` : 'does not match'}`;
  }
  if (!wellFormed(row)) return 'holds a string with a lone surrogate';
  return undefined;
}

function wellFormed(value: unknown): boolean {
  if (typeof value === 'string') return value.isWellFormed();
  if (Array.isArray(value)) return value.every(wellFormed);
  if (typeof value === 'object' && value !== null) return Object.values(value).every(wellFormed);
  return true;
}

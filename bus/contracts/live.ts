// Messages that only live subscribers see (core NATS, not stored): the worker state of a
// session, on subjects.workerState(session), at every change.
import { Type, type Static } from '@sinclair/typebox';
import { SessionId, SessionState, StopReason, WorkerState } from './session.ts';

export const WorkerStateMessage = Type.Object({
  session: SessionId,
  state: WorkerState,
  sessionState: SessionState,
  stopReason: Type.Optional(StopReason),
  /** When the change was written, ms since the epoch. */
  at: Type.Integer(),
});
export type WorkerStateMessage = Static<typeof WorkerStateMessage>;

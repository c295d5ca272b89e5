// Subjects are the API between processes. Every subject of the system is named here.
const root = 'emo';

export const subjects = {
  /** Session creation: only actor hosts with a free slot listen (queue group `hosts`). */
  create: `${root}.sessions.create`,
  /** When a host expects room for a new session: asked when none listens on `create`. */
  room: `${root}.sessions.room`,
  /** Every other API call: `emo.api.<operation>`, served by any host (queue group `api`). */
  api: (operation: string) => `${root}.api.${operation}`,
  apiWildcard: `${root}.api.>`,
  /** Result rows, captured by the ROWS stream and delivered live to core subscribers. */
  row: (session: string, kind: RowKind) => `${root}.rows.${session}.${kind}`,
  rowsOfSession: (session: string) => `${root}.rows.${session}.>`,
  rowsAll: `${root}.rows.>`,
  /** Rows storage could not write, with why: the dead-letter stream DEAD_ROWS. */
  deadRow: (kind: string) => `${root}.dead.${kind}`,
  deadRowsAll: `${root}.dead.>`,
  /** Worker state changes, live only (the KV holds the truth). */
  workerState: (session: string) => `${root}.live.${session}.worker_state`,
  workerStateAll: `${root}.live.*.worker_state`,
} as const;

/**
 * Headers of row messages. `ownerEpoch`: the epoch of the session's owner that made the rows (a
 * fencing token: storage refuses a stale owner's rows, storage/fence.ts); absent on rows any
 * host publishes for a session (custom events) and on rows of publishers older than it.
 */
export const rowHeaders = { ownerEpoch: 'Emo-Owner-Epoch' } as const;

export const ROW_KINDS = ['audio', 'face', 'video', 'speech', 'event'] as const;
export type RowKind = (typeof ROW_KINDS)[number];

export const queues = { hosts: 'hosts', api: 'api' } as const;
export const streams = { rows: 'ROWS', deadRows: 'DEAD_ROWS' } as const;
export const consumers = { writer: 'storage-writer', sessionIndex: 'session-index' } as const;
export const buckets = { sessions: 'sessions', quotas: 'quotas', idempotency: 'idempotency', purges: 'purges' } as const;

// Subjects are the API between processes. Every subject of the system is named here.
//
// Live results are published under their session's tenant, `<product>.<user>`, so that a NATS
// credential can be limited to one product's or one user's results (bus/permissions.ts).
import { createHash } from 'node:crypto';

const root = 'emo';

/** Whose a session is: its creator, as the session record says. */
export interface Owner {
  product: string;
  user: string;
}

const SAFE_TOKEN = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * A product or user id as one subject token: itself when it is letters, digits, - and _ (at most
 * 64), otherwise `~` and the first 32 hex digits of its SHA-256. Either way, different ids give
 * different tokens, and no id can put `.`, `*` or `>` into a subject.
 */
export function subjectToken(id: string): string {
  return SAFE_TOKEN.test(id) ? id : `~${createHash('sha256').update(id).digest('hex').slice(0, 32)}`;
}

/** The two tokens that name a session's tenant in its subjects: `<product>.<user>`. */
export const tenantOf = (owner: Owner) => `${subjectToken(owner.product)}.${subjectToken(owner.user)}`;

export const subjects = {
  /** Session creation: only actor hosts with a free slot listen (queue group `hosts`). */
  create: `${root}.sessions.create`,
  /** When a host expects room for a new session: asked when none listens on `create`. */
  room: `${root}.sessions.room`,
  /** Every other API call: `emo.api.<operation>`, served by any host (queue group `api`). */
  api: (operation: string) => `${root}.api.${operation}`,
  apiWildcard: `${root}.api.>`,
  /**
   * Result rows, captured by the ROWS stream and delivered live to core subscribers:
   * `emo.rows.<session>.<product>.<user>.<kind>` (`tenant` is tenantOf's). The session stays the
   * third token and the kind the last, as in rows published before the tenant was in the subject.
   */
  row: (session: string, tenant: string, kind: RowKind) => `${root}.rows.${session}.${tenant}.${kind}`,
  rowsOfSession: (session: string) => `${root}.rows.${session}.>`,
  rowsAll: `${root}.rows.>`,
  /** Rows storage could not write, with why: the dead-letter stream DEAD_ROWS. */
  deadRow: (kind: string) => `${root}.dead.${kind}`,
  deadRowsAll: `${root}.dead.>`,
  /**
   * Worker state changes, live only (the KV holds the truth): `emo.live.<session>.<product>.<user>.worker_state`.
   * Without `tenant`, the session's whoever its tenant is: for subscribers allowed every tenant.
   */
  workerState: (session: string, tenant = '*.*') => `${root}.live.${session}.${tenant}.worker_state`,
  workerStateAll: `${root}.live.*.*.*.worker_state`,
  /** Every row and worker state of a product (`tenant` its token alone) or of one of its users (`product.user`). */
  rowsOfTenant: (tenant: string) => `${root}.rows.*.${tenant}.>`,
  liveOfTenant: (tenant: string) => `${root}.live.*.${tenant}.>`,
} as const;

/**
 * Headers of row messages. `ownerEpoch`: the epoch of the session's owner that made the rows (a
 * fencing token: storage refuses a stale owner's rows, storage/writer/fence.ts); absent on rows any
 * host publishes for a session (custom events) and on rows of publishers older than it.
 */
export const rowHeaders = { ownerEpoch: 'Emo-Owner-Epoch' } as const;

export const ROW_KINDS = ['audio', 'face', 'video', 'speech', 'event'] as const;
export type RowKind = (typeof ROW_KINDS)[number];

export const queues = { hosts: 'hosts', api: 'api' } as const;
export const streams = { rows: 'ROWS', deadRows: 'DEAD_ROWS' } as const;
export const consumers = { writer: 'storage-writer', sessionIndex: 'session-index' } as const;
export const buckets = { sessions: 'sessions', quotas: 'quotas', idempotency: 'idempotency', purges: 'purges' } as const;

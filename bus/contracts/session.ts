// The session: the record kept in the KV bucket, the object the API returns, and the
// requests that act on it.
import { Type, type Static } from '@sinclair/typebox';
import { SESSION_ID } from '../ids.ts';
import { CleanName } from './text.ts';

export const SESSION_SCHEMA_VERSION = 1;
export const SESSION_STATES = ['active', 'finished'] as const;
export const SESSION_TYPES = ['live_analysis'] as const;
export const WORKER_STATES = ['starting', 'connecting', 'working', 'reconnecting', 'stopped', 'failed'] as const;
export const STOP_REASONS = [
  'client',
  'expired',
  'resolution_exceeded',
  'stream_unreachable',
  'stream_too_fast',
  'cost_exceeded',
  'worker_failed',
] as const;
export const SOURCE_FORMATS = ['text', 'scalar'] as const;

const literals = <T extends readonly string[]>(values: T) => Type.Union(values.map((v) => Type.Literal(v)));

export const SessionId = Type.String({ pattern: SESSION_ID.source });
export const SessionName = CleanName(256);
export const SessionState = literals(SESSION_STATES);
export const SessionType = literals(SESSION_TYPES);
export const WorkerState = literals(WORKER_STATES);
export const StopReason = literals(STOP_REASONS);
export const SourceFormat = literals(SOURCE_FORMATS);
export type WorkerState = Static<typeof WorkerState>;
export type StopReason = Static<typeof StopReason>;

/** Who is calling: set by the gateway from the verified token, never by the client. */
export const Caller = Type.Object({ user: Type.String(), product: Type.String() });
export type Caller = Static<typeof Caller>;

export const SensorSource = Type.Object({
  id: Type.String(),
  name: Type.String(),
  type: Type.Literal('generic_sensor'),
  device: Type.Literal('generic_sensor'),
  format: SourceFormat,
});
export type SensorSource = Static<typeof SensorSource>;

export const StreamSource = Type.Object({
  id: Type.Literal('stream'),
  name: Type.String(),
  type: Type.Literal('stream'),
  device: Type.Union([Type.Literal('rtmp'), Type.Literal('rtmps'), Type.Literal('rtsp')]),
});

/** What the KV holds: the truth about a session. Carries the stream URI with its credentials. */
export const SessionRecord = Type.Object({
  id: SessionId,
  name: SessionName,
  type: SessionType,
  state: SessionState,
  createdAt: Type.Integer(),
  finishedAt: Type.Optional(Type.Integer()),
  user: Type.String(),
  product: Type.String(),
  streamUri: Type.String(),
  sensors: Type.Array(SensorSource),
  owner: Type.Optional(Type.String()),
  /**
   * The owner's term: 0 (or absent, in records written before it) for the host that created
   * the session, one more at each takeover (actors/session/lifecycle.ts). Rows carry the epoch
   * of the host that made them, and storage refuses a stale owner's rows (storage/writer/fence.ts).
   */
  epoch: Type.Optional(Type.Integer({ minimum: 0 })),
  /** When the current epoch began (ms): its owner's rows are the only ones kept from then on. */
  epochStartedAt: Type.Optional(Type.Integer()),
  expiresAt: Type.Integer(),
  healthCheckAt: Type.Integer(),
  workerState: WorkerState,
  stopReason: Type.Optional(StopReason),
  failure: Type.Optional(Type.String()),
  mediaSeconds: Type.Number(),
  /** What the session costs its host, in cores over the last 10 s (actors/session-cost.ts); written with each heartbeat. */
  cpuCores: Type.Optional(Type.Number({ minimum: 0 })),
  /** When a deletion took the session (actors/session/deletion.ts): it cannot be renamed or deleted again meanwhile. */
  deletingSince: Type.Optional(Type.Integer()),
});
export type SessionRecord = Static<typeof SessionRecord>;

/** The session object of the API (spec 2.1). */
export const Session = Type.Object({
  _id: SessionId,
  name: Type.String(),
  type: SessionType,
  state: SessionState,
  timestamp: Type.String(),
  duration: Type.Number(),
  config: Type.Object({ removeMedia: Type.Boolean() }),
  sources: Type.Array(Type.Union([StreamSource, SensorSource])),
  meta: Type.Object({
    expires: Type.String(),
    healthCheck: Type.String(),
    workerState: WorkerState,
    stopReason: Type.Optional(StopReason),
    failure: Type.Optional(Type.String()),
    mediaSeconds: Type.Number(),
    cpuCores: Type.Optional(Type.Number({ minimum: 0 })),
  }),
  product: Type.String(),
  user: Type.String(),
  version: Type.Number(),
});
export type Session = Static<typeof Session>;

// Requests and replies on the bus. Every request names its caller.

export const CreateSessionBody = Type.Object(
  {
    name: SessionName,
    streamUri: Type.String({ minLength: 1, maxLength: 2048 }),
  },
  { additionalProperties: false },
);
/** The `Idempotency-Key` header: printable ASCII, as header values are. */
export const IdempotencyKey = Type.String({
  pattern: '^[\\x20-\\x7e]{1,255}$',
  description: '1 to 255 printable ASCII characters',
});
export const CreateSessionRequest = Type.Object({
  caller: Caller,
  body: CreateSessionBody,
  idempotencyKey: Type.Optional(IdempotencyKey),
});
export type CreateSessionRequest = Static<typeof CreateSessionRequest>;

export const SessionRef = Type.Object({ caller: Caller, session: Type.String() });
export type SessionRef = Static<typeof SessionRef>;

export const UpdateSessionBody = Type.Object({ name: SessionName }, { additionalProperties: false });
export const UpdateSessionRequest = Type.Object({ caller: Caller, session: Type.String(), body: UpdateSessionBody });
export type UpdateSessionRequest = Static<typeof UpdateSessionRequest>;

const ISO_8601 = '\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}:?\\d{2})?)?';
/** The last instant an ISO 8601 date with a four-digit year can name: 9999-12-31T23:59:59.999Z. */
export const MAX_DATE_MS = 253_402_300_799_999;
/**
 * A date bound of a list: an ISO 8601 date or date-time, or Unix milliseconds (the form
 * clients of the original API send). The handler checks that it is a real date, at most
 * MAX_DATE_MS.
 */
export const DateBound = Type.String({
  pattern: `^(\\d{1,15}|${ISO_8601})$`,
  description: 'an ISO 8601 date, such as 2026-01-31 or 2026-01-31T12:00:00Z, or Unix milliseconds',
});

/** How far into a list a page may start: far beyond any real list, and safe in SQL. */
export const MAX_OFFSET = 1_000_000_000;
export const Offset = Type.Integer({ minimum: 0, maximum: MAX_OFFSET, default: 0 });

export const ListSessionsQuery = Type.Object(
  {
    state: Type.Optional(SessionState),
    type: Type.Optional(SessionType),
    from: Type.Optional(DateBound),
    to: Type.Optional(DateBound),
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 10 }),
    offset: Offset,
  },
  { additionalProperties: false },
);
export type ListSessionsQuery = Static<typeof ListSessionsQuery>;
export const ListSessionsRequest = Type.Object({ caller: Caller, query: ListSessionsQuery });
export type ListSessionsRequest = Static<typeof ListSessionsRequest>;

export const Page = <T extends ReturnType<typeof Type.Object>>(item: T) =>
  Type.Object({
    hasMore: Type.Boolean(),
    data: Type.Array(item),
    offset: Type.Integer(),
    limit: Type.Integer(),
  });
export const SessionPage = Page(Session);
export type SessionPage = Static<typeof SessionPage>;

// The WebSocket protocol of /ws/v1. Client requests are `{id, path, body}` and each gets one
// reply `{id, path, status, body}`; pushed data arrives as `[subscriptionId, ts, type, payload]`.
import { Type, type Static } from '@sinclair/typebox';
import type { ErrorDetail } from '../../bus/errors.ts';
import { errorBody } from '../error-body.ts';

export const PATHS = {
  auth: 'auth:token',
  ping: 'ping',
  subscribe: 'channels:subscribe',
  unsubscribe: 'channels:unsubscribe',
} as const;

/** The path of the message, not a reply (its id is null), that tells a client its pushed data is being dropped (outbox.ts). */
export const DROPPED_PATH = 'channels:dropped';

/** How often a subscription delivers what it gathered. */
export const FREQUENCIES = {
  '1s': 1_000,
  '3s': 3_000,
  '5s': 5_000,
  '10s': 10_000,
  '30s': 30_000,
  '1m': 60_000,
  '5m': 300_000,
  '10m': 600_000,
} as const;
export type Frequency = keyof typeof FREQUENCIES;

export const CHANNELS = [
  'session_emotions_counts',
  'session_emotions_intensities',
  'session_worker_state',
  'session_audio_features',
  'session_transcription',
  'session_custom_events',
] as const;
export type Channel = (typeof CHANNELS)[number];

const RequestId = Type.Union([Type.String({ minLength: 1, maxLength: 128 }), Type.Number()], {
  description: 'a string of 1 to 128 characters or a number',
});

export const WsRequest = Type.Object({ id: RequestId, path: Type.String({ maxLength: 64 }), body: Type.Optional(Type.Unknown()) });
export type WsRequest = Static<typeof WsRequest>;

export const AuthBody = Type.Object({ token: Type.String({ minLength: 1, maxLength: 8192 }) });

const frequencyPattern = Object.keys(FREQUENCIES).join('|');
/** The channel whose key may be the bare session id: its changes are sent as they come, never per period. */
export const BARE_KEY_CHANNEL = 'session_worker_state';
export const SubscribeBody = Type.Object(
  {
    channel: Type.Union(CHANNELS.map((channel) => Type.Literal(channel))),
    key: Type.String({
      pattern: `^[^:]{1,64}(:(${frequencyPattern}))?$`,
      description: `sessionId:frequency, the frequency one of ${Object.keys(FREQUENCIES).join(', ')} (the bare sessionId for ${BARE_KEY_CHANNEL})`,
    }),
  },
  { additionalProperties: false },
);
export type SubscribeBody = Static<typeof SubscribeBody>;

const SubscriptionId = Type.String({ minLength: 1, maxLength: 64 });
/** `{id}`, or `{subscriptionId}` as clients of the original API send it (both: the same id). */
export const UnsubscribeBody = Type.Object(
  { id: Type.Optional(SubscriptionId), subscriptionId: Type.Optional(SubscriptionId) },
  { additionalProperties: false },
);

/** The session and frequency of a key that matched SubscribeBody's pattern; a bare key has no frequency. */
export function parseKey(key: string): { session: string; frequency?: Frequency } {
  const colon = key.lastIndexOf(':');
  if (colon < 0) return { session: key };
  return { session: key.slice(0, colon), frequency: key.slice(colon + 1) as Frequency };
}

export interface Reply {
  id: string | number | null;
  path: string;
  status: number;
  body: unknown;
}

export const okReply = (request: WsRequest, body: unknown, status = 200): string =>
  JSON.stringify({ id: request.id, path: request.path, status, body } satisfies Reply);

export function errorReply(
  request: { id?: unknown; path?: unknown },
  status: number,
  code: string,
  message: string,
  details?: ErrorDetail[],
): string {
  const id = typeof request.id === 'string' || typeof request.id === 'number' ? request.id : null;
  const path = typeof request.path === 'string' ? request.path : '';
  return JSON.stringify({ id, path, status, body: errorBody(status, code, message, details) } satisfies Reply);
}

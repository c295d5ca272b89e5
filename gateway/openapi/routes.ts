// Every REST route of the gateway with the contracts it reads and answers, as the OpenAPI
// document shows them. The routers in gateway/routes/ parse with the same schemas; the test
// test/integration/openapi.test.ts proves that this table and the routers list the same routes.
import { Type, type TObject, type TSchema } from '@sinclair/typebox';
import { RegisterSourceBody, EventInput, ListEventsQuery } from '../../bus/contracts/events.ts';
import { TimelineQuery, TotalsQuery, SpeechSegmentsQuery } from '../../bus/contracts/results.ts';
import { CreateSessionBody, IdempotencyKey, ListSessionsQuery, UpdateSessionBody } from '../../bus/contracts/session.ts';
import { operations } from '../../bus/operations.ts';
import { EventBatch, SourcedBatch, SourcedEvent } from '../routes/events.ts';

export type Method = 'get' | 'post' | 'patch' | 'delete';

export interface DocumentedRoute {
  method: Method;
  /** As the router writes it: /v1/sessions/:sessionId. */
  path: string;
  operationId: string;
  tag: 'sessions' | 'results' | 'events' | 'document';
  summary: string;
  /** Answered without a token, so without the errors and headers that authentication brings. */
  public?: boolean;
  query?: TObject;
  /** The route folds `expand[]=session` into `expand` (gateway/routes/expand.ts). */
  expandArray?: boolean;
  /** Optional request headers. */
  headers?: Record<string, TSchema>;
  body?: TSchema;
  success: { status: 200 | 201 | 204; description: string; schema?: TSchema };
  /** What a status means on this route, beyond what it means on every route (see responses.ts). */
  errors?: Partial<Record<404 | 400 | 409 | 429 | 503, string>>;
}

const NOT_FOUND = 'the session does not exist or belongs to someone else (the same answer either way)';

export const documentedRoutes: DocumentedRoute[] = [
  {
    method: 'get', path: '/v1/openapi.json', operationId: 'getOpenApiDocument', tag: 'document', public: true,
    summary: 'This OpenAPI 3.1 document',
    success: { status: 200, description: 'the document', schema: Type.Object({ openapi: Type.Literal('3.1.0') }) },
  },
  {
    method: 'post', path: '/v1/sessions', operationId: 'createSession', tag: 'sessions',
    summary: 'Create a session: analyse a live stream (rtmp, rtmps, rtsp) until it is stopped',
    headers: { 'Idempotency-Key': IdempotencyKey },
    body: CreateSessionBody,
    success: { status: 201, description: 'the created session', schema: operations['sessions.create'].reply },
    errors: {
      400: 'a stream URI that is not rtmp, rtmps or rtsp, or whose host is not allowed; an Idempotency-Key reused with a different body',
      429: 'the user holds the most active sessions allowed (`quota_exceeded`), or created the most sessions allowed per minute (`rate_limited`)',
      503: 'no host has capacity (`overloaded`), or another request with the same Idempotency-Key is being answered at that moment; a retry with the key returns the session if one was made',
    },
  },
  {
    method: 'get', path: '/v1/sessions', operationId: 'listSessions', tag: 'sessions',
    summary: 'List sessions, newest first',
    query: ListSessionsQuery,
    success: { status: 200, description: 'a page of sessions', schema: operations['sessions.list'].reply },
  },
  {
    method: 'get', path: '/v1/sessions/:sessionId', operationId: 'getSession', tag: 'sessions',
    summary: 'One session',
    success: { status: 200, description: 'the session', schema: operations['sessions.get'].reply },
    errors: { 404: NOT_FOUND },
  },
  {
    method: 'patch', path: '/v1/sessions/:sessionId', operationId: 'updateSession', tag: 'sessions',
    summary: 'Rename a session (name is the only editable field)',
    body: UpdateSessionBody,
    success: { status: 200, description: 'the renamed session', schema: operations['sessions.update'].reply },
    errors: { 400: 'a field other than name is read-only', 404: NOT_FOUND, 409: 'the session is being deleted (`being_deleted`), or archived: finished and unchanged for longer than records are kept, it is read-only (`session_archived`)' },
  },
  {
    method: 'post', path: '/v1/sessions/:sessionId/stop', operationId: 'stopSession', tag: 'sessions',
    summary: 'Stop an active session',
    success: { status: 200, description: 'the finished session', schema: operations['sessions.stop'].reply },
    errors: { 400: 'the session is not active (`session_not_active`)', 404: NOT_FOUND },
  },
  {
    method: 'delete', path: '/v1/sessions/:sessionId', operationId: 'deleteSession', tag: 'sessions',
    summary: 'Remove a finished session and all its results',
    success: { status: 204, description: 'removed; the session and its results now answer 404' },
    errors: {
      400: 'the session is active (`session_active`); stop it first',
      404: NOT_FOUND,
      409: 'another DELETE of the session is under way (`being_deleted`)',
      503: 'the queue of sessions to purge is full (nothing was deleted, retry), or time ran out and the service finishes the deletion',
    },
  },
  {
    method: 'get', path: '/v1/sessions/:sessionId/emotions', operationId: 'getEmotionTotals', tag: 'results',
    summary: 'Face-seconds dominated by each emotion',
    query: TotalsQuery, expandArray: true,
    success: { status: 200, description: 'the totals', schema: operations['emotions.totals'].reply },
    errors: { 404: NOT_FOUND },
  },
  {
    method: 'get', path: '/v1/sessions/:sessionId/emotions/timeline', operationId: 'getEmotionsTimeline', tag: 'results',
    summary: 'Emotions per interval; intervals without data are left out',
    query: TimelineQuery, expandArray: true,
    success: { status: 200, description: 'the timeline', schema: operations['emotions.timeline'].reply },
    errors: { 404: NOT_FOUND },
  },
  {
    method: 'get', path: '/v1/sessions/:sessionId/audio/features', operationId: 'getAudioFeatures', tag: 'results',
    summary: 'Pitch and level per interval; intervals without data are left out',
    query: TimelineQuery, expandArray: true,
    success: { status: 200, description: 'the timeline', schema: operations['audio.features'].reply },
    errors: { 404: NOT_FOUND },
  },
  {
    method: 'get', path: '/v1/sessions/:sessionId/audio/transcription-sentiment', operationId: 'getTranscriptionSentiment', tag: 'results',
    summary: 'Sentiment of the transcribed speech per interval; intervals without data are left out',
    query: TimelineQuery, expandArray: true,
    success: { status: 200, description: 'the timeline', schema: operations['speech.sentiment'].reply },
    errors: { 404: NOT_FOUND },
  },
  {
    method: 'get', path: '/v1/sessions/:sessionId/audio/transcription', operationId: 'listTranscription', tag: 'results',
    summary: 'The transcribed segments in time order',
    query: SpeechSegmentsQuery,
    success: { status: 200, description: 'a page of segments', schema: operations['speech.segments'].reply },
    errors: { 404: NOT_FOUND },
  },
  {
    method: 'post', path: '/v1/sessions/:sessionId/events', operationId: 'registerSourceOrAddEvents', tag: 'events',
    summary: 'Register a sensor source ({name, format}), or add events with `source` in each (one or up to 1000)',
    body: Type.Union([RegisterSourceBody, SourcedEvent, SourcedBatch]),
    success: {
      status: 201,
      description: 'the registered source, or the created events',
      schema: Type.Union([operations['sources.register'].reply, operations['events.add'].reply]),
    },
    errors: {
      400: 'the session is not active; a source name already in use; events from several sources, or data that does not fit the source format',
      404: `${NOT_FOUND}; or the source does not exist`,
      429: 'the session has the most sources allowed (`quota_exceeded`), or the user sent the most events or bytes of events allowed per second (`rate_limited`)',
    },
  },
  {
    method: 'post', path: '/v1/sessions/:sessionId/events/:sourceId', operationId: 'addEvents', tag: 'events',
    summary: 'Add events of one source: one {time, data} or up to 1000',
    body: Type.Union([EventInput, EventBatch]),
    success: { status: 201, description: 'the created events', schema: operations['events.add'].reply },
    errors: {
      400: 'the session is not active; data that does not fit the source format',
      404: `${NOT_FOUND}; or the source does not exist`,
      429: 'the user sent the most events or bytes of events allowed per second (`rate_limited`)',
    },
  },
  {
    method: 'get', path: '/v1/sessions/:sessionId/events', operationId: 'listEvents', tag: 'events',
    summary: "The session's events",
    query: ListEventsQuery,
    success: { status: 200, description: 'a page of events', schema: operations['events.list'].reply },
    errors: { 404: NOT_FOUND },
  },
];

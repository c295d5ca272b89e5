// Every request between processes: one definition per operation, its subject, the contract of
// its request and the contract of its reply (as NATS micro services define an endpoint), and
// the service that answers it. The sender sends with it, the responder validates what it
// receives with it, and replies are checked against it before they leave the responder.
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import {
  CreateSessionRequest,
  ListSessionsRequest,
  Session,
  SessionPage,
  SessionRef,
  SensorSource,
  UpdateSessionRequest,
} from './contracts/session.ts';
import {
  AudioFeaturesEntry,
  EmotionTotals,
  EmotionsEntry,
  ResultRequest,
  SentimentEntry,
  TotalsRequest,
  SpeechSegmentsPage,
  SpeechSegmentsRequest,
  timelineOf,
} from './contracts/results.ts';
import {
  AddEventsReply,
  AddEventsRequest,
  EventPage,
  ListEventsRequest,
  RegisterSourceRequest,
} from './contracts/events.ts';
import { subjects } from './subjects.ts';

/**
 * The process that answers: `actors`, an actor host (it owns session records and changes
 * them), or `storage`, a storage service (it reads and deletes what ClickHouse holds). Named by
 * the folder of its code; test/unit/bus-operations.test.ts checks that only that folder serves it.
 */
export type Service = 'actors' | 'storage';

interface Definition {
  subject: string;
  request: TSchema;
  reply: TSchema;
  answeredBy: Service;
}

const api = <Request extends TSchema, Reply extends TSchema>(answeredBy: Service, name: string, request: Request, reply: Reply) => ({
  subject: subjects.api(name),
  request,
  reply,
  answeredBy,
});

export const operations = {
  // Creation goes only to hosts with a free slot; everything else to any responder.
  'sessions.create': { subject: subjects.create, request: CreateSessionRequest, reply: Session, answeredBy: 'actors' },
  // Asked when no host has room for a create: when one of them expects to have it.
  'sessions.room': {
    subject: subjects.room,
    request: Type.Object({}),
    reply: Type.Object({ retryAfterMs: Type.Integer({ minimum: 0 }) }),
    answeredBy: 'actors',
  },
  'sessions.get': api('actors', 'sessions.get', SessionRef, Session),
  'sessions.list': api('storage', 'sessions.list', ListSessionsRequest, SessionPage),
  'sessions.update': api('actors', 'sessions.update', UpdateSessionRequest, Session),
  'sessions.stop': api('actors', 'sessions.stop', SessionRef, Session),
  // Removes a finished session and all its results: the host, which owns the record, has storage purge the rows first.
  'sessions.delete': api('actors', 'sessions.delete', SessionRef, Type.Null()),
  'emotions.totals': api('storage', 'emotions.totals', TotalsRequest, EmotionTotals),
  'emotions.timeline': api('storage', 'emotions.timeline', ResultRequest, timelineOf(EmotionsEntry)),
  'audio.features': api('storage', 'audio.features', ResultRequest, timelineOf(AudioFeaturesEntry)),
  'speech.sentiment': api('storage', 'speech.sentiment', ResultRequest, timelineOf(SentimentEntry)),
  'speech.segments': api('storage', 'speech.segments', SpeechSegmentsRequest, SpeechSegmentsPage),
  'sources.register': api('actors', 'sources.register', RegisterSourceRequest, SensorSource),
  'events.add': api('actors', 'events.add', AddEventsRequest, AddEventsReply),
  'events.list': api('storage', 'events.list', ListEventsRequest, EventPage),
  // Actor hosts to storage: remove a finished session's rows from ClickHouse, before its record goes.
  'sessions.purge': api('storage', 'sessions.purge', SessionRef, Type.Null()),
  // Actor hosts to storage: a session whose record has aged out of the bucket, from the index.
  'sessions.archived': api('storage', 'sessions.archived', SessionRef, Session),
} satisfies Record<string, Definition>;

export type Operation = keyof typeof operations;
export type RequestOf<O extends Operation> = Static<(typeof operations)[O]['request']>;
export type ReplyOf<O extends Operation> = Static<(typeof operations)[O]['reply']>;

// Every request between processes: one definition per operation, its subject, the contract of
// its request and the contract of its reply (as NATS micro services define an endpoint). The
// sender sends with it, the responder validates what it receives with it, and replies are
// checked against it before they leave the responder.
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { SessionIndexRow } from './contracts/rows.ts';
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
  TranscriptionPage,
  TranscriptionRequest,
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

interface Definition {
  subject: string;
  request: TSchema;
  reply: TSchema;
}

const api = <Request extends TSchema, Reply extends TSchema>(name: string, request: Request, reply: Reply) => ({
  subject: subjects.api(name),
  request,
  reply,
});

export const operations = {
  // Creation goes only to hosts with a free slot; everything else to any responder.
  'sessions.create': { subject: subjects.create, request: CreateSessionRequest, reply: Session },
  // Asked when no host has room for a create: when one of them expects to have it.
  'sessions.room': {
    subject: subjects.room,
    request: Type.Object({}),
    reply: Type.Object({ retryAfterMs: Type.Integer({ minimum: 0 }) }),
  },
  'sessions.get': api('sessions.get', SessionRef, Session),
  'sessions.list': api('sessions.list', ListSessionsRequest, SessionPage),
  'sessions.update': api('sessions.update', UpdateSessionRequest, Session),
  'sessions.stop': api('sessions.stop', SessionRef, Session),
  // Removes a finished session and all its results (answered by an actor host, which owns records).
  'sessions.delete': api('sessions.delete', SessionRef, Type.Null()),
  'emotions.totals': api('emotions.totals', TotalsRequest, EmotionTotals),
  'emotions.timeline': api('emotions.timeline', ResultRequest, timelineOf(EmotionsEntry)),
  'audio.features': api('audio.features', ResultRequest, timelineOf(AudioFeaturesEntry)),
  'audio.sentiment': api('audio.sentiment', ResultRequest, timelineOf(SentimentEntry)),
  'audio.transcription': api('audio.transcription', TranscriptionRequest, TranscriptionPage),
  'sources.register': api('sources.register', RegisterSourceRequest, SensorSource),
  'events.add': api('events.add', AddEventsRequest, AddEventsReply),
  'events.list': api('events.list', ListEventsRequest, EventPage),
  // Actor hosts to storage: a session's entry in the list index changed.
  'sessions.index': api('sessions.index', SessionIndexRow, Type.Null()),
  // Actor hosts to storage: remove a finished session's rows from ClickHouse, before its record goes.
  'sessions.purge': api('sessions.purge', SessionRef, Type.Null()),
} satisfies Record<string, Definition>;

export type Operation = keyof typeof operations;
export type RequestOf<O extends Operation> = Static<(typeof operations)[O]['request']>;
export type ReplyOf<O extends Operation> = Static<(typeof operations)[O]['reply']>;

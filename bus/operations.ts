// Every request the gateway can send, with the contract of its body. Gateway and actors both
// use this table: the gateway to send, the hosts to validate what they receive.
import type { TSchema } from '@sinclair/typebox';
import {
  CreateSessionRequest,
  ListSessionsRequest,
  SessionRef,
  UpdateSessionRequest,
} from './contracts/session.ts';
import { ResultRequest, TotalsRequest, TranscriptionRequest } from './contracts/results.ts';
import { AddEventsRequest, ListEventsRequest, RegisterSourceRequest } from './contracts/events.ts';
import { subjects } from './subjects.ts';

export const operations = {
  'sessions.create': CreateSessionRequest,
  'sessions.get': SessionRef,
  'sessions.list': ListSessionsRequest,
  'sessions.update': UpdateSessionRequest,
  'sessions.stop': SessionRef,
  'emotions.totals': TotalsRequest,
  'emotions.timeline': ResultRequest,
  'audio.features': ResultRequest,
  'audio.sentiment': ResultRequest,
  'audio.transcription': TranscriptionRequest,
  'sources.register': RegisterSourceRequest,
  'events.add': AddEventsRequest,
  'events.list': ListEventsRequest,
} satisfies Record<string, TSchema>;

export type Operation = keyof typeof operations;

/** Creation goes only to hosts with a free slot; everything else to any host. */
export const subjectOf = (operation: Operation) =>
  operation === 'sessions.create' ? subjects.create : subjects.api(operation);

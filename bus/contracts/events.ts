// Custom sensor sources and their events (spec 4.10, 4.11, section 6).
import { Type, type Static } from '@sinclair/typebox';
import { Caller, Offset, Page, SourceFormat } from './session.ts';
import { CleanName, CleanText } from './text.ts';
import { CustomEvent } from './rows.ts';

export const MAX_EVENTS_PER_REQUEST = 1000;
export const MAX_TEXT_EVENT_LENGTH = 4096;
/** Seconds from the session's start: decades, far beyond any session, exact in a double. */
export const MAX_EVENT_TIME = 1_000_000_000;

export const RegisterSourceBody = Type.Object(
  { name: CleanName(256), format: SourceFormat },
  { additionalProperties: false },
);
export const RegisterSourceRequest = Type.Object({ caller: Caller, session: Type.String(), body: RegisterSourceBody });
export type RegisterSourceRequest = Static<typeof RegisterSourceRequest>;

/** One event as a client sends it; whether `data` fits the source's format is checked against the source. */
export const EventInput = Type.Object(
  {
    time: Type.Number({ minimum: 0, maximum: MAX_EVENT_TIME }),
    data: Type.Union([CleanText(MAX_TEXT_EVENT_LENGTH), Type.Number()]),
  },
  { additionalProperties: false },
);
export type EventInput = Static<typeof EventInput>;

export const AddEventsRequest = Type.Object({
  caller: Caller,
  session: Type.String(),
  source: Type.String(),
  events: Type.Array(EventInput, { minItems: 1, maxItems: MAX_EVENTS_PER_REQUEST }),
});
export type AddEventsRequest = Static<typeof AddEventsRequest>;

/** The reply: the created events as the API shows them (without the internal id). */
export const PublicEvent = Type.Omit(CustomEvent, ['id']);
export type PublicEvent = Static<typeof PublicEvent>;
export const AddEventsReply = Type.Array(PublicEvent);

export const ListEventsQuery = Type.Object(
  {
    source: Type.Optional(Type.String()),
    from: Type.Optional(Type.Number({ minimum: 0, maximum: MAX_EVENT_TIME })),
    to: Type.Optional(Type.Number({ minimum: 0, maximum: MAX_EVENT_TIME })),
    order: Type.Union([Type.Literal('asc'), Type.Literal('desc')], { default: 'asc' }),
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 10 }),
    offset: Offset,
  },
  { additionalProperties: false },
);
export type ListEventsQuery = Static<typeof ListEventsQuery>;
export const ListEventsRequest = Type.Object({ caller: Caller, session: Type.String(), query: ListEventsQuery });
export type ListEventsRequest = Static<typeof ListEventsRequest>;
export const EventPage = Page(PublicEvent);

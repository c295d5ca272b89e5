// What each kind of process may do on the bus: one NATS user per kind, each allowed only the
// subjects it needs. Derived from the subjects, operations, streams and buckets it uses, so
// that a new operation or bucket changes the permissions with it. The NATS configurations
// are written from here: the local servers' (ops/stack/nats.ts) and production's
// (ops/production/nats-analytics.conf, held equal by test/unit/bus-permissions.test.ts).
import { operations, type Operation } from './operations.ts';
import { buckets, streams, subjects } from './subjects.ts';

export const BUS_USERS = ['gateway', 'host', 'storage'] as const;
export type BusUser = (typeof BUS_USERS)[number];

export interface Permissions {
  /** None: it may publish nothing. */
  publish: string[];
  subscribe: string[];
  /**
   * May answer a request it received, whoever sent it (NATS' allow_responses): the replies to
   * callers outside the service, such as an operator's tools or the tests, which take theirs in
   * inboxes of no kind's prefix.
   */
  answers?: boolean;
}

/**
 * Each kind's replies arrive under its own prefix: a kind may subscribe to its own inboxes
 * only, so none can read the replies another kind is sent (a session record read from the KV
 * arrives in an inbox).
 */
export const inboxPrefix = (user: BusUser) => `_INBOX.${user}`;

const operationNames = Object.keys(operations) as Operation[];
const subjectsOf = (names: Operation[]) => names.map((name) => operations[name].subject);
const answeredBy = (service: 'actors' | 'storage') => operationNames.filter((name) => operations[name].answeredBy === service);

/**
 * The operations each kind calls: a host has storage purge a deleted session's rows and read a
 * session whose record has aged out; the gateway calls every other.
 */
const HOST_CALLS: Operation[] = ['sessions.purge', 'sessions.archived'];
const CALLS: Record<BusUser, Operation[]> = {
  gateway: operationNames.filter((name) => !HOST_CALLS.includes(name)),
  host: HOST_CALLS,
  storage: [],
};

/**
 * Where a responder's replies go: the inboxes of the kinds that call what it answers. NATS'
 * allow_responses alone lets a reply through only on the server the request came in on: a
 * reply made after its responder reconnected to another server (a cluster losing a node) was
 * refused.
 */
const repliesOf = (service: 'actors' | 'storage') =>
  BUS_USERS.filter((caller) => CALLS[caller].some((name) => operations[name].answeredBy === service)).map((caller) => `${inboxPrefix(caller)}.>`);

/** The JetStream API of one stream: reading it, following it with consumers, and configuring it. */
function streamApi(stream: string, { configure = false, purge = false } = {}): string[] {
  return [
    `$JS.API.STREAM.INFO.${stream}`,
    `$JS.API.STREAM.MSG.GET.${stream}`,
    `$JS.API.DIRECT.GET.${stream}`,
    `$JS.API.DIRECT.GET.${stream}.>`,
    `$JS.API.CONSUMER.CREATE.${stream}`,
    `$JS.API.CONSUMER.CREATE.${stream}.>`,
    `$JS.API.CONSUMER.INFO.${stream}.*`,
    `$JS.API.CONSUMER.DELETE.${stream}.*`,
    `$JS.API.CONSUMER.MSG.NEXT.${stream}.*`,
    ...(configure ? [`$JS.API.STREAM.CREATE.${stream}`, `$JS.API.STREAM.UPDATE.${stream}`, `$JS.API.CONSUMER.DURABLE.CREATE.${stream}.*`] : []),
    ...(purge ? [`$JS.API.STREAM.PURGE.${stream}`] : []),
  ];
}

/** A KV bucket: its stream's API (every process opening a bucket may create it) and, if written, its keys. */
function bucketAccess(bucket: string, { write = false, purge = false } = {}): string[] {
  return [...streamApi(`KV_${bucket}`, { configure: true, purge }), ...(write ? [`$KV.${bucket}.>`] : [])];
}

/**
 * Broad on purpose: acknowledgements and flow-control replies of the streams a kind consumes
 * (their subjects name the consumer, not only the stream), and the account's JetStream limits.
 */
const consuming = (...names: string[]) => [...names.map((name) => `$JS.ACK.${name}.>`), '$JS.FC.>', '$JS.API.INFO'];

export function permissions(user: BusUser): Permissions {
  switch (user) {
    // Internet-facing: it asks, and follows live results; no JetStream, no KV, answers nothing.
    case 'gateway':
      return {
        publish: subjectsOf(CALLS[user]),
        subscribe: [`${inboxPrefix(user)}.>`, subjects.rowsAll, subjects.workerStateAll],
      };
    case 'host':
      return {
        publish: [
          ...subjectsOf(CALLS[user]),
          ...repliesOf('actors'),
          subjects.rowsAll,
          subjects.workerStateAll,
          ...bucketAccess(buckets.sessions, { write: true }),
          ...bucketAccess(buckets.quotas, { write: true }),
          ...bucketAccess(buckets.idempotency, { write: true }),
          // Whether the row buffer has room (actors/rows-room.ts).
          `$JS.API.STREAM.INFO.${streams.rows}`,
          ...consuming(),
        ],
        subscribe: [`${inboxPrefix(user)}.>`, ...subjectsOf(answeredBy('actors'))],
        answers: true,
      };
    case 'storage':
      return {
        publish: [
          ...repliesOf('storage'),
          subjects.deadRowsAll,
          ...streamApi(streams.rows, { configure: true }),
          ...streamApi(streams.deadRows, { configure: true }),
          // Reads the records and follows them into the session index; never writes one.
          ...bucketAccess(buckets.sessions),
          ...bucketAccess(buckets.purges, { write: true, purge: true }),
          ...consuming(streams.rows, `KV_${buckets.sessions}`),
        ],
        subscribe: [`${inboxPrefix(user)}.>`, ...subjectsOf(answeredBy('storage'))],
        answers: true,
      };
  }
}

/**
 * A tenant's credential for live results: every row and worker state of one product (`tenant`
 * the product's subject token) or of one of its users (`<product>.<user>`, bus/subjects.ts
 * tenantOf). It publishes nothing, so it needs no inbox either.
 */
export function tenantPermissions(tenant: string): Permissions {
  return { publish: [], subscribe: [subjects.rowsOfTenant(tenant), subjects.liveOfTenant(tenant)] };
}

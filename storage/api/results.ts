// Result reads: totals, timelines and the transcript of a session, answered by any storage
// service. Ownership is checked against the session record in the KV, as every read is, or
// the index's row once the record has aged out (storage/sessions/archive.ts).
import type { ClickHouseClient } from '@clickhouse/client';
import type { NatsConnection } from '@nats-io/transport-node';
import type { ResultRequest, TimelineQuery } from '../../bus/contracts/results.ts';
import { badRequest } from '../../bus/errors.ts';
import type { Logger } from '../../bus/log.ts';
import { serve, type RequestObserver } from '../../bus/rpc.ts';
import { elapsedSeconds, presentSession, type PublicRecord } from '../../bus/session-view.ts';
import { queues } from '../../bus/subjects.ts';
import { readsUntil } from '../clickhouse/read-deadline.ts';
import type { ReadContext, ReadsInFlight } from '../clickhouse/reads-in-flight.ts';
import { readsOfSession } from '../results/session-shard.ts';
import type { SessionArchive } from '../sessions/archive.ts';
import type { Shards } from '../results/shards.ts';
import {
  audioFeatures,
  emotionTotals,
  emotionsTimeline,
  sentimentTimeline,
} from '../results/timelines.ts';
import type { Window } from '../results/timeline-window.ts';
import { listSpeechSegments } from '../results/speech-segments.ts';

/** `shards`: those of the cluster the tables are sharded on, if any; `inFlight`: each user's reads at once. */
export function serveResults(
  nc: NatsConnection,
  sessions: SessionArchive,
  clickhouse: ClickHouseClient,
  shards: Shards | undefined,
  inFlight: ReadsInFlight,
  log: Logger,
  observe?: RequestObserver,
) {
  const options = { queue: queues.api, log, observe };
  // A session's reads end with their deadline, and answer while another shard is lost.
  const reads = (session: string, { deadline, priority }: ReadContext) => readsUntil(readsOfSession(clickhouse, shards, session), deadline, priority);
  const sessionField = (record: PublicRecord, expand: 'session' | undefined) =>
    expand === 'session' ? presentSession(record) : record.id;

  const timeline = <Entry>(query: (client: ClickHouseClient, window: Window) => Promise<Entry[]>) =>
    async (request: ResultRequest, context: ReadContext) => {
      const record = await sessions.owned(request.caller, request.session);
      const window = windowOf(record, request.query);
      const entries = window.end > window.start ? await query(reads(record.id, context), window) : [];
      return { session: sessionField(record, request.query.expand), timeline: entries };
    };

  return [
    serve(nc, 'emotions.totals', inFlight.bound(async ({ caller, session, query }, context: ReadContext) => {
      const record = await sessions.owned(caller, session);
      return { session: sessionField(record, query.expand), emotions: await emotionTotals(reads(record.id, context), record.id) };
    }), options),
    serve(nc, 'emotions.timeline', inFlight.bound(timeline(emotionsTimeline)), options),
    serve(nc, 'audio.features', inFlight.bound(timeline(audioFeatures)), options),
    serve(nc, 'speech.sentiment', inFlight.bound(timeline(sentimentTimeline)), options),
    serve(nc, 'speech.segments', inFlight.bound(async ({ caller, session, query }, context: ReadContext) => {
      const record = await sessions.owned(caller, session);
      if (query.end !== undefined && query.end <= query.start) throw endBeforeStart();
      return listSpeechSegments(reads(record.id, context), { session: record.id, ...query });
    }), options),
  ];
}

/** The window of a timeline request; `end` defaults to the session's duration. */
function windowOf(record: PublicRecord, query: TimelineQuery): Window {
  if (query.end !== undefined && query.end <= query.start) throw endBeforeStart();
  const end = query.end ?? Math.ceil(elapsedSeconds(record));
  return { session: record.id, granularity: query.granularity, start: query.start, end };
}

const endBeforeStart = () =>
  badRequest('invalid_query', 'query.end: must be greater than start', [
    { field: 'query.end', message: 'must be greater than start' },
  ]);

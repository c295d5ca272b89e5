// Custom sensor sources and their events. An event is acknowledged to the client only once
// the row stream has stored it, so a 201 is never lost, even while ClickHouse is down.
import type { NatsConnection } from '@nats-io/transport-node';
import { MAX_TEXT_EVENT_LENGTH, type EventInput, type PublicEvent } from '../../bus/contracts/events.ts';
import type { CustomEvent } from '../../bus/contracts/rows.ts';
import type { SensorSource } from '../../bus/contracts/session.ts';
import { badRequest, notFound, quotaExceeded, unavailable, type ErrorDetail } from '../../bus/errors.ts';
import { newId } from '../../bus/ids.ts';
import type { Logger } from '../../bus/log.ts';
import { serve, type RequestObserver } from '../../bus/rpc.ts';
import { queues } from '../../bus/subjects.ts';
import type { RowPublisher } from '../rows.ts';
import { UNCHANGED, type SessionRecords } from '../../bus/session-records.ts';

export function serveEvents(
  nc: NatsConnection,
  records: SessionRecords,
  rows: RowPublisher,
  maxSources: number,
  log: Logger,
  observe?: RequestObserver,
) {
  const options = { queue: queues.api, log, observe };
  return [
    serve(nc, 'sources.register', async ({ caller, session, body }): Promise<SensorSource> => {
      const { record } = await records.owned(caller, session);
      requireActive(record.state);
      const source: SensorSource = {
        id: newId(),
        name: body.name,
        device: 'generic_sensor',
        type: 'generic_sensor',
        format: body.format,
      };
      let duplicate = false;
      let full = false;
      const updated = await records.update(session, (current) => {
        if (current.state !== 'active') return UNCHANGED;
        duplicate = current.sensors.some((s) => s.name === body.name);
        full = current.sensors.length >= maxSources;
        return duplicate || full ? UNCHANGED : { ...current, sensors: [...current.sensors, source] };
      });
      if (full) throw quotaExceeded(`a session may have at most ${maxSources} sources`);
      if (duplicate) {
        throw badRequest('duplicate_source', `body.name: a source named "${body.name}" exists in this session`, [
          { field: 'body.name', message: 'is already used by another source of this session' },
        ]);
      }
      requireActive(updated?.record.state ?? 'finished');
      return source;
    }, options),

    serve(nc, 'events.add', async ({ caller, session, source: sourceId, events }): Promise<PublicEvent[]> => {
      let { record } = await records.owned(caller, session);
      // A source registered through another host a moment ago may not be in this host's cache yet.
      if (!record.sensors.some((s) => s.id === sourceId)) ({ record } = await records.owned(caller, session, true));
      const source = record.sensors.find((s) => s.id === sourceId);
      if (!source) throw notFound('source');
      requireActive(record.state);
      checkFormat(source, events);
      const created: CustomEvent[] = events.map((event) => ({
        id: newId(),
        session,
        source: source.id,
        user: caller.user,
        type: 'sensor_report',
        time: event.time,
        data: event.data,
      }));
      try {
        await rows.publishDurably(session, 'event', created, created[0]!.id);
      } catch {
        throw unavailable('events could not be stored right now; nothing was stored, retry later');
      }
      return created.map(({ id: _id, ...event }) => event);
    }, options),

  ];
}

function requireActive(state: string): void {
  if (state !== 'active') {
    throw badRequest('session_not_active', `the session is ${state}; sources and events need an active session`);
  }
}

/** Every event must match the source's format; one bad event rejects the request. */
function checkFormat(source: SensorSource, events: EventInput[]): void {
  const details: ErrorDetail[] = [];
  events.forEach((event, index) => {
    const field = `body.${index}.data`;
    if (source.format === 'scalar' && (typeof event.data !== 'number' || !Number.isFinite(event.data))) {
      details.push({ field, message: 'must be a finite number for a scalar source' });
    }
    if (source.format === 'text' && typeof event.data !== 'string') {
      details.push({ field, message: `must be a string of at most ${MAX_TEXT_EVENT_LENGTH} characters for a text source` });
    }
  });
  if (details.length) {
    throw badRequest('invalid_body', details.slice(0, 5).map((d) => `${d.field}: ${d.message}`).join('; '), details);
  }
}

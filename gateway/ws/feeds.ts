// Fan-out. One feed per (session, channel, frequency) in a gateway: one NATS subscription, one
// aggregator and one serialisation of each payload (fanout.ts), however many sockets listen.
// The first listener creates the feed; the last one to leave tears it down.
import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import { WorkerStateMessage } from '../../bus/contracts/live.ts';
import { checker } from '../../bus/validate.ts';
import type { Logger } from '../../bus/log.ts';
import { subjects, type RowKind } from '../../bus/subjects.ts';
import { createAggregator, type Aggregator, type PeriodicChannel } from './aggregators.ts';
import { encodeDelivery, type EncodeDelivery } from './delivery.ts';
import { Fanout, type FeedListener } from './fanout.ts';
import { FREQUENCIES, type Channel, type Frequency } from './protocol.ts';

const ROW_KIND: Record<PeriodicChannel, RowKind> = {
  session_emotions_counts: 'face',
  session_emotions_intensities: 'face',
  session_audio_features: 'audio',
  session_transcription: 'speech',
  session_custom_events: 'event',
};

export class Feeds {
  private readonly feeds = new Map<string, Feed>();

  constructor(
    private readonly nc: NatsConnection,
    private readonly log: Logger,
    /** How each payload is serialised, once for all of its listeners. */
    private readonly encode: EncodeDelivery = encodeDelivery,
  ) {}

  /** Adds a listener; returns the function that removes it. `tenant`: whose the session is (bus/subjects.ts tenantOf). */
  join(session: string, tenant: string, channel: Channel, frequency: Frequency, listener: FeedListener): () => void {
    const key = `${session}|${channel}|${frequency}`;
    let feed = this.feeds.get(key);
    if (!feed) {
      feed = new Feed(this.nc, session, tenant, channel, FREQUENCIES[frequency], new Fanout(channel, this.encode, this.log), this.log);
      this.feeds.set(key, feed);
    }
    const joined = feed;
    joined.fanout.listeners.add(listener);
    return () => {
      joined.fanout.listeners.delete(listener);
      if (joined.fanout.listeners.size === 0 && this.feeds.get(key) === joined) {
        this.feeds.delete(key);
        joined.close();
      }
    };
  }

  /** Feeds alive in this gateway (each one NATS subscription). */
  get size(): number {
    return this.feeds.size;
  }

  close(): void {
    for (const feed of this.feeds.values()) feed.close();
    this.feeds.clear();
  }
}

class Feed {
  private readonly subscription: Subscription;
  private readonly aggregator?: Aggregator;
  private readonly timer?: NodeJS.Timeout;

  constructor(
    nc: NatsConnection,
    session: string,
    tenant: string,
    channel: Channel,
    periodMs: number,
    readonly fanout: Fanout,
    private readonly log: Logger,
  ) {
    if (channel === 'session_worker_state') {
      this.subscription = nc.subscribe(subjects.workerState(session, tenant), { callback: (error, msg) => this.onState(error, msg) });
      return;
    }
    const aggregator = createAggregator(channel);
    this.aggregator = aggregator;
    this.subscription = nc.subscribe(subjects.row(session, tenant, ROW_KIND[channel]), {
      callback: (error, msg) => {
        if (error) return this.log.warn({ err: error, channel }, 'live subscription failed');
        try {
          aggregator.add(msg.json());
        } catch {
          return this.log.warn({ subject: msg.subject }, 'live message is not JSON; skipped');
        }
        if (aggregator.full) this.emit();
      },
    });
    this.timer = setInterval(() => this.emit(), periodMs);
  }

  close(): void {
    clearInterval(this.timer);
    this.subscription.unsubscribe();
  }

  /** Worker states are rare and wanted at once: forwarded as they come, not batched. */
  private onState(error: Error | null, msg: Msg): void {
    if (error) return this.log.warn({ err: error }, 'worker state subscription failed');
    let change: unknown;
    try {
      change = msg.json();
    } catch {
      return this.log.warn({ subject: msg.subject }, 'worker state is not JSON; skipped');
    }
    if (!checker(WorkerStateMessage).Check(change)) {
      return this.log.warn({ subject: msg.subject }, 'worker state does not match its contract; skipped');
    }
    const { state, at, stopReason } = change;
    this.fanout.send({ state, at, ...(stopReason ? { stopReason } : {}) });
  }

  private emit(): void {
    const payload = this.aggregator?.flush();
    if (payload) this.fanout.send(payload);
  }
}

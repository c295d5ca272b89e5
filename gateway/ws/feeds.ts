// Fan-out. One feed per (session, channel, frequency) in a gateway: one NATS subscription and
// one aggregator, however many sockets listen. The first listener creates the feed; the last
// one to leave tears it down.
import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import { WorkerStateMessage } from '../../bus/contracts/live.ts';
import { checker } from '../../bus/validate.ts';
import type { Logger } from '../../bus/log.ts';
import { subjects, type RowKind } from '../../bus/subjects.ts';
import { createAggregator, type Aggregator, type PeriodicChannel } from './aggregators.ts';
import { FREQUENCIES, type Channel, type Frequency } from './protocol.ts';

export interface FeedListener {
  /** One delivery; the payload is already JSON. */
  deliver(type: Channel, ts: number, payloadJson: string): void;
}

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
  ) {}

  /** Adds a listener; returns the function that removes it. */
  join(session: string, channel: Channel, frequency: Frequency, listener: FeedListener): () => void {
    const key = `${session}|${channel}|${frequency}`;
    let feed = this.feeds.get(key);
    if (!feed) {
      feed = new Feed(this.nc, session, channel, FREQUENCIES[frequency], this.log);
      this.feeds.set(key, feed);
    }
    const joined = feed;
    joined.listeners.add(listener);
    return () => {
      joined.listeners.delete(listener);
      if (joined.listeners.size === 0 && this.feeds.get(key) === joined) {
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
  readonly listeners = new Set<FeedListener>();
  private readonly subscription: Subscription;
  private readonly aggregator?: Aggregator;
  private readonly timer?: NodeJS.Timeout;

  constructor(
    nc: NatsConnection,
    session: string,
    private readonly channel: Channel,
    periodMs: number,
    private readonly log: Logger,
  ) {
    if (channel === 'session_worker_state') {
      this.subscription = nc.subscribe(subjects.workerState(session), { callback: (error, msg) => this.onState(error, msg) });
      return;
    }
    const aggregator = createAggregator(channel);
    this.aggregator = aggregator;
    this.subscription = nc.subscribe(subjects.row(session, ROW_KIND[channel]), {
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
    this.send(JSON.stringify({ state, at, ...(stopReason ? { stopReason } : {}) }));
  }

  private emit(): void {
    const payload = this.aggregator?.flush();
    if (payload) this.send(JSON.stringify(payload));
  }

  private send(payloadJson: string): void {
    const ts = Date.now();
    for (const listener of this.listeners) {
      try {
        listener.deliver(this.channel, ts, payloadJson);
      } catch (error) {
        this.log.warn({ err: error }, 'a listener failed to take a delivery');
      }
    }
  }
}

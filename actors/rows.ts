// Publishes result rows on the ROWS stream. Core subscribers of the same subject receive
// them live. Each message has an id, so a retried publish is stored once. A publish that fails
// (NATS restarting, stream full) is retried in the background; rows waiting to be published
// are bounded so a long outage cannot exhaust memory, and what is shed is counted and logged.
import type { JetStreamClient } from '@nats-io/jetstream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../bus/log.ts';
import { subjects, type RowKind } from '../bus/subjects.ts';

interface Pending {
  subject: string;
  payload: string;
  id: string;
}

export class RowPublisher {
  private readonly retries: Pending[] = [];
  private retrying = false;
  dropped = 0;

  constructor(
    private readonly js: JetStreamClient,
    private readonly log: Logger,
    private readonly maxPending = 100_000,
  ) {}

  publish(session: string, kind: RowKind, rows: unknown[], id: string): void {
    const pending = { subject: subjects.row(session, kind), payload: JSON.stringify(rows), id };
    this.send(pending).catch(() => this.retryLater(pending));
  }

  /** Publishes and waits for the stream's acknowledgement: for callers that promise durability. */
  async publishDurably(session: string, kind: RowKind, rows: unknown[], id: string): Promise<void> {
    await this.send({ subject: subjects.row(session, kind), payload: JSON.stringify(rows), id });
  }

  private async send(pending: Pending): Promise<void> {
    await this.js.publish(pending.subject, pending.payload, { msgID: pending.id, timeout: 5000 });
  }

  private retryLater(pending: Pending): void {
    if (this.retries.length >= this.maxPending) {
      this.retries.shift();
      this.dropped++;
      if (this.dropped % 1000 === 1) this.log.error({ dropped: this.dropped }, 'row buffer full; oldest rows shed');
    }
    this.retries.push(pending);
    if (!this.retrying) void this.drainRetries();
  }

  private async drainRetries(): Promise<void> {
    this.retrying = true;
    let backoff = 250;
    while (this.retries.length) {
      const next = this.retries[0] as Pending;
      try {
        await this.send(next);
        this.retries.shift();
        backoff = 250;
      } catch (error) {
        this.log.warn({ err: error, waiting: this.retries.length }, 'publishing rows failed; retrying');
        await sleep(backoff);
        backoff = Math.min(backoff * 2, 5000);
      }
    }
    this.retrying = false;
  }
}

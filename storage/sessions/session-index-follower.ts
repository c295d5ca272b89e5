// The session index follows the sessions bucket: one durable consumer on the bucket's stream,
// shared by the storage services that write, so each change is stored once whichever service
// gets it. Changes are stored as they come: whatever arrived while the last insert ran is the
// next batch, acknowledged only once ClickHouse has its rows, so the consumer's acknowledgement
// floor says what the index holds (storage/sessions/index-progress.ts). A service lost before
// it acknowledged leaves its batch to another after `ack_wait`. Rows carry the record's KV
// revision, by which the table collapses a change stored twice.
//
// A change replaced in the bucket leaves the stream, and JetStream may count one leaving while
// unacknowledged as acknowledged: the floor passes it while its batch is still inserting
// (ClickHouse slow, or away and retried). When the replacement marks the session for deletion,
// its purge round may then run before that insert lands: what guards against it is in
// index-inserts.ts. Left: a watch that hears of a deletion only after the deletion's request,
// its purge round and the insert are all done.
import { AckPolicy, DeliverPolicy, type Consumer, type ConsumerMessages, type JetStreamClient, type JetStreamManager, type JsMsg } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SessionRecord } from '../../bus/contracts/session.ts';
import type { Logger } from '../../bus/log.ts';
import { consumers } from '../../bus/subjects.ts';
import { SESSIONS_STREAM } from './index-progress.ts';
import { ListedChanges } from './listed-changes.ts';
import type { IndexInserts } from './index-inserts.ts';
import { indexRow, type SessionIndexRow } from './sessions-index.ts';

const BATCH = 1000;

export class SessionIndexFollower {
  private running = true;
  private messages?: ConsumerMessages;
  private arrived: JsMsg[] = [];
  private wake?: () => void;
  private readonly listed = new ListedChanges();
  private readonly loops: Promise<void>[];

  private constructor(
    consumer: Consumer,
    private readonly inserts: IndexInserts,
    private readonly log: Logger,
  ) {
    this.loops = [this.receive(consumer), this.storeArrived()];
  }

  static async start(
    js: JetStreamClient,
    jsm: JetStreamManager,
    inserts: IndexInserts,
    log: Logger,
  ): Promise<SessionIndexFollower> {
    await ensureConsumer(jsm);
    return new SessionIndexFollower(await js.consumers.get(SESSIONS_STREAM, consumers.sessionIndex), inserts, log);
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.messages?.close();
    this.wake?.();
    await Promise.all(this.loops);
  }

  private async receive(consumer: Consumer): Promise<void> {
    while (this.running) {
      try {
        this.messages = await consumer.consume({ max_messages: BATCH });
        for await (const message of this.messages) {
          this.arrived.push(message);
          this.wake?.();
        }
      } catch (error) {
        this.log.warn({ err: error }, 'receiving session changes failed; retrying');
      }
      if (this.running) await sleep(500);
    }
  }

  private async storeArrived(): Promise<void> {
    while (this.running) {
      if (!this.arrived.length) {
        await new Promise<void>((resolve) => (this.wake = resolve));
        continue;
      }
      await this.store(this.arrived.splice(0, BATCH));
    }
  }

  /** Inserts the batch's rows, retrying while ClickHouse cannot take them, then acknowledges it. */
  private async store(batch: JsMsg[]): Promise<void> {
    const rows = batch.flatMap((message) => this.rowOf(message));
    for (let attempt = 0; rows.length; attempt++) {
      try {
        await this.inserts.insert(rows);
        break;
      } catch (error) {
        if (!this.running) return; // unacknowledged: another service stores it
        this.log.warn({ err: error, attempt, rows: rows.length }, 'indexing sessions failed; retrying');
        for (const message of [...batch, ...this.arrived]) message.working();
        await sleep(Math.min(250 * 2 ** attempt, 5000));
      }
    }
    for (const message of batch) message.ack();
  }

  private rowOf(message: JsMsg): SessionIndexRow[] {
    const id = message.subject.slice(message.subject.lastIndexOf('.') + 1);
    const put = (message.headers?.get('KV-Operation') || 'PUT') === 'PUT';
    const record = put ? message.json<SessionRecord>() : undefined;
    const needed = this.listed.needsRow(id, record, message.info.deliverySequence, message.redelivered);
    return needed && record ? [indexRow(record, message.seq)] : [];
  }
}

/** Creates the shared consumer, or finds it made by another service. */
async function ensureConsumer(jsm: JetStreamManager): Promise<void> {
  const consumer = {
    durable_name: consumers.sessionIndex,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    // A list waits for its user's changes a lost service held this long at most, a purge round
    // for any; changes whose insert retries are kept alive with working().
    ack_wait: nanos(5_000),
    max_ack_pending: 10_000,
  };
  if (await jsm.consumers.info(SESSIONS_STREAM, consumers.sessionIndex).catch(() => undefined)) return;
  await jsm.consumers.add(SESSIONS_STREAM, consumer).catch(async (error) => {
    await jsm.consumers.info(SESSIONS_STREAM, consumers.sessionIndex).catch(() => {
      throw error;
    });
  });
}

// Publishes result rows on the ROWS stream. Core subscribers of the same subject receive
// them live. Each message has an id made from what it holds (bus/ids.ts), so a retried publish
// is stored once. A publish that fails (NATS restarting, the stream full and refusing) is
// retried in the background; rows waiting to be published are bounded so a long outage cannot
// exhaust memory, and what is refused or shed is counted and logged. Nothing is published
// while the stream is near full (rows-room.ts): rows wait here instead.
//
// The rows of a session this host owns carry its owner's epoch (a fencing token, storage/writer/fence.ts)
// and go out only under a lease: once its owner's last heartbeat that landed is older than the
// lease (the host was paused, or cut off), its rows wait here until a heartbeat lands again or
// the session is let go, so a host that comes back from a pause publishes nothing before it has
// checked that it still owns the session.
//
// Rows go out under their session's tenant (bus/subjects.ts), read from the host's copy of the
// session record: an active session's is fresh, its heartbeat rewrites it every few seconds.
import type { JetStreamClient } from '@nats-io/jetstream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../bus/log.ts';
import { rowMessageId } from '../bus/ids.ts';
import { headers } from '@nats-io/transport-node';
import { rowHeaders, subjects, tenantOf, type Owner, type RowKind } from '../bus/subjects.ts';
import { RowsRoom } from './rows-room.ts';

interface Pending {
  subject: string;
  payload: string;
  id: string;
  /** Rows in the payload. */
  rows: number;
  /** The epoch of the session's owner that made them; none for rows any host publishes. */
  epoch?: number;
}

/** A session this host owns, as its rows see it. */
interface Ownership {
  epoch: number;
  /** When the last heartbeat that landed was sent: the lease runs from then. */
  confirmedAt: number;
  leaseMs: number;
  /** Rows made after the lease ran out, in order, waiting for the next heartbeat. */
  held: Pending[];
}

export class RowPublisher {
  private readonly retries: Pending[] = [];
  private readonly owned = new Map<string, Ownership>();
  private retrying = false;
  /** Rows the stream has acknowledged, since start. */
  published = 0;
  /** Rows shed from the waiting buffer because it was full, since start. */
  dropped = 0;
  /** Publishes held back or refused because the stream was full, since start. */
  refused = 0;
  private readonly room: RowsRoom;

  /** Row messages published but not yet acknowledged by the stream: in flight, or waiting to be sent again. */
  unacknowledged = 0;

  constructor(
    private readonly js: JetStreamClient,
    private readonly log: Logger,
    /** Whose each session is. */
    private readonly owners: (session: string) => Owner | undefined = () => undefined,
    private readonly maxPending = 100_000,
  ) {
    this.room = new RowsRoom(js);
  }

  /**
   * From now on the session's rows carry `epoch` and go out while its owner's heartbeat is at
   * most `leaseMs` old (a heartbeat counts from when it was sent: confirm()).
   */
  own(session: string, epoch: number, leaseMs: number): void {
    this.owned.set(session, { epoch, confirmedAt: Date.now(), leaseMs, held: [] });
  }

  /** A heartbeat sent at `sentAt` landed: the session is still this host's; what waited goes out. */
  confirm(session: string, sentAt: number): void {
    const ownership = this.owned.get(session);
    if (!ownership) return;
    ownership.confirmedAt = Math.max(ownership.confirmedAt, sentAt);
    this.release(ownership);
  }

  /**
   * The session is no longer run here (finished, or lost to another host). What waited goes out
   * with the epoch it was made in: storage keeps the rows of seconds nobody else analysed and
   * refuses the rest (storage/writer/fence.ts).
   */
  disown(session: string): void {
    const ownership = this.owned.get(session);
    if (!ownership) return;
    this.owned.delete(session);
    this.release(ownership);
  }

  /** `key` tells the rows apart from the session's other rows of this kind (a second, a revision). */
  publish(session: string, kind: RowKind, rows: unknown[], key: string | number): void {
    const ownership = kind === 'event' ? undefined : this.owned.get(session);
    const pending = {
      subject: this.subject(session, kind), payload: JSON.stringify(rows), id: rowMessageId(session, kind, key, ownership?.epoch), rows: rows.length, epoch: ownership?.epoch,
    };
    this.unacknowledged++;
    if (ownership && Date.now() - ownership.confirmedAt > ownership.leaseMs) {
      this.hold(ownership, pending);
      return;
    }
    this.sendInBackground(pending);
  }

  private sendInBackground(pending: Pending): void {
    this.send(pending).then(
      () => this.unacknowledged--,
      () => this.retryLater(pending),
    );
  }

  /** Publishes and waits for the stream's acknowledgement: for callers that promise durability. */
  async publishDurably(session: string, kind: RowKind, rows: unknown[], key: string | number): Promise<void> {
    await this.send({ subject: this.subject(session, kind), payload: JSON.stringify(rows), id: rowMessageId(session, kind, key), rows: rows.length });
  }

  /**
   * A session whose record this host no longer has at hand (rows of a worker stopping just as
   * its record left the cache) is published under the tenant `~.~`, which no product or user
   * has: storage stores the rows all the same; only its tenant's live subscribers miss them.
   */
  private subject(session: string, kind: RowKind): string {
    const owner = this.owners(session);
    return subjects.row(session, owner ? tenantOf(owner) : UNKNOWN_TENANT, kind);
  }

  private async send(pending: Pending): Promise<void> {
    if (!(await this.room.admits(pending.payload.length + pending.subject.length))) {
      this.noteRefused();
      throw new Error('the row stream is near full: maximum bytes exceeded');
    }
    try {
      const h = pending.epoch === undefined ? undefined : headers();
      h?.set(rowHeaders.ownerEpoch, String(pending.epoch));
      // An acknowledgement lost with a server that died comes never: send again soon (the id makes it safe).
      await this.js.publish(pending.subject, pending.payload, { msgID: pending.id, timeout: 2000, headers: h });
      this.published += pending.rows;
    } catch (error) {
      if (isStreamFull(error)) this.noteRefused();
      throw error;
    }
  }

  private noteRefused(): void {
    // Once per burst: the first refusal, then every thousandth.
    if (this.refused++ % 1000 === 0) {
      this.log.error({ refused: this.refused }, 'the row stream is full and refuses rows; they wait here and are retried');
    }
  }

  private hold(ownership: Ownership, pending: Pending): void {
    if (ownership.held.length >= this.maxPending) {
      ownership.held.shift();
      this.shed();
    }
    ownership.held.push(pending);
  }

  private release(ownership: Ownership): void {
    for (const pending of ownership.held.splice(0)) this.sendInBackground(pending);
  }

  private shed(): void {
    this.unacknowledged--;
    this.dropped++;
    if (this.dropped % 1000 === 1) this.log.error({ dropped: this.dropped }, 'row buffer full; oldest rows shed');
  }

  private retryLater(pending: Pending): void {
    if (this.retries.length >= this.maxPending) {
      this.retries.shift();
      this.shed();
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
        this.unacknowledged--;
        backoff = 250;
      } catch (error) {
        this.log.warn({ err: error, waiting: this.retries.length }, 'publishing rows failed; retrying');
        await sleep(backoff);
        // At most a second apart: the rows wait only in this process, and a NATS election is
        // over in a few seconds. One message at a time, so a long outage costs one try a second.
        backoff = Math.min(backoff * 2, 1000);
      }
    }
    this.retrying = false;
  }
}

const UNKNOWN_TENANT = '~.~';

// JetStream's answers when a stream with `discard: new` is at its limits.
function isStreamFull(error: unknown): boolean {
  return error instanceof Error && /maximum (bytes|messages|messages per subject) exceeded|10047|10077|10078/i.test(`${error.message} ${String((error as { code?: unknown }).code ?? '')}`);
}

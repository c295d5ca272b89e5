// The session actor: lives on the host that owns an active session. It supervises the
// session's worker, writes its heartbeat and worker state into the KV record, enforces the
// expiry, and finishes the session when the worker ends for good or gives up. The record in
// the KV is the truth; when it says the session finished or belongs to another host, the
// actor stops its worker and goes away.
import type { SessionRecord, StopReason, WorkerState } from '../../bus/contracts/session.ts';
import type { Logger } from '../../bus/log.ts';
import { Actor } from '../actor.ts';
import type { RowPublisher } from '../rows.ts';
import { Supervisor, DEFAULT_SUPERVISION, type Child, type SupervisorOptions } from '../supervisor.ts';
import { finishWithRetries } from './lifecycle.ts';
import { UNCHANGED, type SessionRecords } from '../../bus/session-records.ts';
import { StreamWorker, type WorkerResources } from './worker.ts';
import type { SessionCost } from '../session-cost.ts';

type Message =
  | { type: 'heartbeat' }
  | { type: 'record'; record: SessionRecord }
  | { type: 'worker-state'; state: WorkerState }
  | { type: 'worker-ended'; reason: StopReason; detail: string }
  | { type: 'leave' };

export interface SessionActorOptions {
  record: SessionRecord;
  hostId: string;
  records: SessionRecords;
  rows: RowPublisher;
  /** What the session's stream worker needs from the host. */
  resources: WorkerResources;
  /** How often the actor writes its heartbeat into the record. */
  heartbeatMs: number;
  log: Logger;
  /** Called once the actor has stopped its worker and holds nothing any more. */
  onGone(id: string): void;
  /** What the session costs the host: its worker's parts add to it, its heartbeat shows it. */
  cost?: SessionCost;
  /** Builds the worker; replaceable so the supervision can be exercised with another child. */
  startWorker?: (actor: SessionActor) => Child;
  supervision?: SupervisorOptions;
}

export class SessionActor extends Actor<Message> {
  readonly id: string;
  private supervisor?: Supervisor;
  private heartbeat?: NodeJS.Timeout;
  private workerState: WorkerState = 'starting';
  private mediaSeconds: number;
  private gone = false;

  constructor(private readonly options: SessionActorOptions) {
    super(options.log.child({ session: options.record.id }));
    this.id = options.record.id;
    this.mediaSeconds = options.record.mediaSeconds;
  }

  /** Whether the actor is leaving (the session finished, or went to another host): it holds no room any more. */
  get leaving(): boolean {
    return this.gone;
  }

  /** The worker's last reported state, for the host's metrics. */
  get reportedWorkerState(): WorkerState {
    return this.workerState;
  }

  start(): void {
    const { record } = this.options;
    const startWorker = this.options.startWorker ?? ((actor: SessionActor) => actor.streamWorker(record));
    this.supervisor = new Supervisor(() => startWorker(this), {
      ...(this.options.supervision ?? DEFAULT_SUPERVISION),
      onRestart: (error, restarts) => this.log.warn({ err: error, restarts }, 'worker crashed; restarting'),
    });
    this.supervisor.done.then(
      () => {},
      (error: unknown) => this.send({ type: 'worker-ended', reason: 'worker_failed', detail: describe(error) }),
    );
    this.heartbeat = setInterval(() => this.send({ type: 'heartbeat' }), this.options.heartbeatMs);
    this.heartbeat.unref();
    // The session's rows carry this host's epoch, and wait whenever two heartbeats in a row
    // have not landed: a takeover needs TAKEOVER_SECONDS (three heartbeats at least) without
    // one, so a host that was paused or cut off for that long publishes nothing more until its
    // next heartbeat (sent at once as it runs again) has found the session still its own.
    this.options.rows.own(this.id, record.epoch ?? 0, LEASE_HEARTBEATS * this.options.heartbeatMs);
  }

  /** Ends the session for a reason of the host's (its cost), as if its worker had ended so. */
  end(reason: StopReason, detail: string): void {
    this.send({ type: 'worker-ended', reason, detail });
  }

  /** The default child: ingest and analysis of the session's stream. */
  streamWorker(record: SessionRecord): Child {
    const { rows, resources, cost } = this.options;
    // A worker counts what it received itself; the session's count goes on from where the
    // record (written by this host or the one before it) left off, and never goes back.
    const before = this.mediaSeconds;
    return new StreamWorker({
      session: record.id,
      createdAt: record.createdAt,
      streamUri: record.streamUri,
      rows,
      resources,
      log: this.log,
      cost,
      reports: {
        state: (state) => this.send({ type: 'worker-state', state }),
        mediaSeconds: (seconds) => (this.mediaSeconds = before + seconds),
        ended: (reason, detail) => this.send({ type: 'worker-ended', reason, detail }),
        cpu: (part, seconds) => {
          cost?.add(seconds);
          resources.metrics?.sessionCpuSpent?.(part, seconds);
        },
      },
    });
  }

  protected async handle(message: Message): Promise<void> {
    if (this.gone) return;
    switch (message.type) {
      case 'heartbeat':
        return this.beat();
      case 'record':
        if (message.record.state !== 'active' || message.record.owner !== this.options.hostId) await this.leave();
        return;
      case 'worker-state':
        this.workerState = message.state;
        if (message.state === 'working') this.options.cost?.working();
        await this.write((record) => ({ ...record, workerState: message.state }));
        return;
      case 'worker-ended':
        this.log.info({ reason: message.reason, detail: message.detail }, 'session ends');
        await finishWithRetries(this.options.records, this.id, message.reason, message.detail, this.options.hostId, this.log);
        return this.leave();
      case 'leave':
        return this.leave();
    }
  }

  private async beat(): Promise<void> {
    const now = Date.now();
    const written = await this.write((record) =>
      now >= record.expiresAt
        ? record
        : { ...record, healthCheckAt: now, mediaSeconds: this.mediaSeconds, workerState: this.workerState, ...this.costNow() },
    );
    if (written) this.options.rows.confirm(this.id, now);
    if (written && now >= written.expiresAt) {
      const detail = 'the session reached its maximum length';
      await finishWithRetries(this.options.records, this.id, 'expired', detail, this.options.hostId, this.log);
      await this.leave();
    }
  }

  /** The session's cost for its record, once it has one to show. */
  private costNow(): { cpuCores?: number } {
    const cost = this.options.cost;
    return cost ? { cpuCores: Math.round(cost.cores() * 1000) / 1000 } : {};
  }

  /**
   * Changes the record if this host still owns the active session; otherwise leaves. A write
   * gets one heartbeat period: one sent as the connection dropped is never answered, and had
   * it the JetStream timeout (5 s) the lease would lapse before the next beat could renew it.
   */
  private async write(change: (record: SessionRecord) => SessionRecord): Promise<SessionRecord | undefined> {
    let lost = false;
    let result;
    try {
      result = await this.options.records.update(this.id, (record) => {
        if (record.state !== 'active' || record.owner !== this.options.hostId) {
          lost = true;
          return UNCHANGED;
        }
        return change(record);
      }, { timeoutMs: this.options.heartbeatMs });
    } catch (error) {
      // The KV is unreachable (NATS restarting, the connection moving): keep working, the next heartbeat retries.
      this.log.warn({ err: error }, 'session record not written; next heartbeat retries');
      return undefined;
    }
    // Finished, owned by another host, or gone: this host has nothing more to do for it.
    if (lost || result === undefined) {
      this.log.info({ record: lost ? 'finished or owned by another host' : 'gone' }, 'session left');
      await this.leave();
      return undefined;
    }
    return result.record;
  }

  private async leave(): Promise<void> {
    if (this.gone) return;
    this.gone = true;
    clearInterval(this.heartbeat);
    await this.supervisor?.stop();
    this.options.rows.disown(this.id);
    await this.recordFinalMedia();
    this.options.onGone(this.id);
  }

  /**
   * Whoever finished the session (any host serves a stop) wrote the media count of the last
   * heartbeat. Once the worker has stopped, the owner adds what arrived since, so a finished
   * session's `mediaSeconds` covers every row it published. Not for a session another host owns,
   * or one still active (this host is shutting down: the next owner goes on from the record), so
   * the host's own copy of the record decides first, and a shutdown asks the bucket nothing.
   */
  private async recordFinalMedia(): Promise<void> {
    if (this.options.records.peek(this.id)?.record.state !== 'finished') return;
    const media = this.mediaSeconds;
    const owner = this.options.hostId;
    await this.options.records
      .update(this.id, (record) =>
        record.state === 'finished' && record.owner === owner && record.mediaSeconds < media ? { ...record, mediaSeconds: media } : UNCHANGED,
      )
      .catch((error: unknown) => this.log.warn({ err: error }, 'final media count not written'));
  }
}

/** Heartbeats that may fail in a row before the session's rows wait for the next one to land. */
const LEASE_HEARTBEATS = 2;

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

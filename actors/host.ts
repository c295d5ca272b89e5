// An actor host: runs the session actors it owns, answers the API requests that change
// sessions, and takes over sessions whose host died. Stored results are the storage service's.
// What it is made of is built in host-parts.ts.
import { availableParallelism } from 'node:os';
import type { Subscription } from '@nats-io/transport-node';
import type { Session, SessionRecord } from '../bus/contracts/session.ts';
import { overloaded } from '../bus/errors.ts';
import { serve, type CallContext, type RequestOf } from '../bus/rpc.ts';
import { presentSession, publicRecord } from '../bus/session-view.ts';
import { queues } from '../bus/subjects.ts';
import { serveEvents } from './api/events.ts';
import { serveSessions } from './api/sessions.ts';
import { closeHostParts, type HostParts } from './host-parts.ts';
import { WINDOW_MS } from './host-load.ts';
import { roomFor, type Room } from './host-room.ts';
import { SessionCost } from './session-cost.ts';
import { SessionBudgets } from './session-budgets.ts';
import { SessionActor } from './session/actor.ts';
import { admitSession } from './session/admission.ts';
import { LeaseClock } from './session/lease-clock.ts';
import { isStale, takeOver } from './session/lifecycle.ts';
import { ABANDONED_MS, resumeDeletion } from './session/deletion.ts';

/** How often the host asks itself whether it keeps up. */
const LOAD_CHECK_MS = 1000;

export class ActorHost {
  private readonly actors = new Map<string, SessionActor>();
  /** What each session run here costs (session-cost.ts). */
  private readonly costs = new Map<string, SessionCost>();
  /**
   * Sessions gone within the last window, with when: what they spent is still in the measured
   * load, which would keep their room taken for a window after they stopped.
   */
  private readonly departed = new Map<SessionCost, number>();
  /** Creates being admitted: each is charged a session's budget until it runs or is refused. */
  private readonly admitting = new Set<SessionCost>();
  private readonly budgets: SessionBudgets;
  /** Active sessions seen on the KV, for spotting the ones whose host stopped beating. */
  private readonly active = new Map<string, SessionRecord>();
  /** Sessions being deleted, by when their deletion last took them: resumed once abandoned. */
  private readonly deleting = new Map<string, number>();
  private readonly subscriptions: Subscription[] = [];
  private createSubscription?: Subscription;
  private takeoverTimer?: NodeJS.Timeout;
  private loadTimer?: NodeJS.Timeout;
  /** Why the host is behind, when it is (HostLoad). */
  private behind: string | undefined;
  private stopping = false;
  private takingOver = false;
  private readonly leaseClock: LeaseClock;

  private constructor(private readonly parts: HostParts) {
    this.leaseClock = new LeaseClock(() => parts.records.writable());
    this.budgets = new SessionBudgets({
      budgetCores: parts.config.sessionBudgetCores,
      stopAfterSeconds: parts.config.sessionOverBudgetStopSeconds,
      log: parts.log,
      observe: (cores) => parts.metrics.sessionCost(cores),
      stop: (session, detail) => this.actors.get(session)?.end('cost_exceeded', detail),
    });
  }

  /** Starts serving with `parts`: the sessions' API, the room, creates while there is room, takeovers. */
  static async start(parts: HostParts): Promise<ActorHost> {
    const host = new ActorHost(parts);
    await host.run();
    return host;
  }

  private async run(): Promise<void> {
    this.subscriptions.push(
      ...serveSessions(this.parts.nc, this.parts.records, this.parts.config.sessionRecordMaxAgeSeconds * 1000, this.parts.log, this.parts.metrics.bus),
      ...serveEvents(this.parts.nc, this.parts.records, this.parts.rows, this.parts.config.sessionMaxSources, this.parts.log, this.parts.metrics.bus),
    );
    this.parts.metrics.watch(
      () => [...this.actors.values()].map((actor) => actor.reportedWorkerState),
      () => this.behind !== undefined,
      this.parts.rows,
    );
    await this.watchSessions();
    this.takeoverTimer = setInterval(() => void this.takeOverStale(), this.parts.config.heartbeatSeconds * 1000);
    this.loadTimer = setInterval(() => this.checkLoad(), LOAD_CHECK_MS);
    this.checkLoad();
    this.subscriptions.push(
      serve(this.parts.nc, 'sessions.room', async () => {
        const room = this.room();
        return { retryAfterMs: room.fits ? 0 : room.retryAfterMs };
      }, { queue: queues.hosts, log: this.parts.log, observe: this.parts.metrics.bus }),
    );
    this.parts.log.info({ capacity: this.parts.config.hostCapacity }, 'actor host ready');
  }

  /** Measures the CPU used, holds each session to its budget, and updates the room. */
  private checkLoad(): void {
    this.parts.cpu.sample();
    this.budgets.review(this.costs);
    this.updateCapacity();
  }

  /** The host's measured load, less what sessions gone since the window began spent in it. */
  private measuredCores(): number {
    const now = Date.now();
    let gone = 0;
    for (const [cost, at] of this.departed) {
      if (now - at >= WINDOW_MS) this.departed.delete(cost);
      else gone += cost.cores();
    }
    return Math.max(0, this.parts.cpu.cores() - gone);
  }

  /** Sessions the host runs that are not leaving: a stopped session's room is free at once. */
  private staying(): number {
    let staying = 0;
    for (const actor of this.actors.values()) if (!actor.leaving) staying++;
    return staying;
  }

  /** The costs of sessions (and creates) not yet measured for a window, leaving ones aside. */
  private unmeasured(): SessionCost[] {
    const running = [...this.actors.values()].filter((actor) => !actor.leaving).map((actor) => this.costs.get(actor.id));
    return [...running, ...this.admitting].filter((cost): cost is SessionCost => cost !== undefined && !cost.measured);
  }

  /** What the room was decided on, for the log. */
  private roomFigures(): Record<string, number> {
    const round = (cores: number) => Math.round(cores * 1000) / 1000;
    const unmeasured = this.unmeasured();
    return {
      sessions: this.staying(),
      admitting: this.admitting.size,
      measuredCores: round(this.measuredCores()),
      unmeasuredSessions: unmeasured.length,
      unmeasuredCores: round(unmeasured.reduce((sum, cost) => sum + cost.cores(), 0)),
      behindForMs: this.parts.load.keepsUpInMs(),
    };
  }

  private room(): Room {
    const { config, load } = this.parts;
    const unmeasured = this.unmeasured().map((cost) => ({ cores: cost.cores(), measuredAt: cost.measuredAt() }));
    return roomFor({
      cores: availableParallelism(),
      capacity: config.hostCapacity,
      sessions: this.staying() + this.admitting.size,
      measuredCores: this.measuredCores(),
      unmeasured,
      // A host with no session has none to protect: what its window saw belonged to sessions now gone.
      behindForMs: this.stopping ? WINDOW_MS : this.actors.size === 0 ? 0 : load.keepsUpInMs(),
      windowMs: WINDOW_MS,
      now: Date.now(),
    });
  }

  /** Listens for new sessions only while there is room for one: a full or busy cluster answers 503 at once. */
  private updateCapacity(): void {
    const behind = this.parts.load.behind((id) => this.costs.get(id)?.measured ?? false);
    // Logged when it changes, not with every new figure while it lasts.
    if (behind && !this.behind) this.parts.log.warn({ sessions: this.actors.size, behind }, 'host behind: taking no new session');
    if (!behind && this.behind) this.parts.log.info({ sessions: this.actors.size }, 'host keeps up again: taking new sessions');
    this.behind = behind;
    const free = this.room().fits;
    if (free && !this.createSubscription) {
      this.createSubscription = serve(this.parts.nc, 'sessions.create', (request, context) => this.create(request, context), {
        queue: queues.hosts,
        log: this.parts.log,
        observe: this.parts.metrics.bus,
      });
    } else if (!free && this.createSubscription) {
      this.parts.log.info(this.roomFigures(), 'no room for another session: taking no create until there is');
      // Drained, not dropped: creates the server routed here before it learned of the change
      // are still answered (503 overloaded, by create's own check) instead of left to time out.
      this.createSubscription.drain().catch((error: unknown) => this.parts.log.debug({ err: error }, 'create subscription not drained'));
      this.createSubscription = undefined;
    }
  }

  private async create(request: RequestOf<'sessions.create'>, { deadline }: CallContext): Promise<Session> {
    // Creates that arrived together all passed the subscription: each checks again.
    const room = this.room();
    if (!room.fits) {
      this.parts.log.info(this.roomFigures(), 'create refused: no room');
      throw overloaded(room.retryAfterMs);
    }
    const cost = new SessionCost(WINDOW_MS);
    this.admitting.add(cost);
    this.updateCapacity();
    try {
      const admitted = await admitSession(this.parts.admission, request, deadline);
      if (admitted.created) this.startActor(admitted.record, cost);
      return presentSession(publicRecord(admitted.record));
    } finally {
      this.admitting.delete(cost);
      this.updateCapacity();
    }
  }

  /** Runs a session on this host; until `cost` has measured it for a window, it holds a reservation (host-room.ts). */
  private startActor(record: SessionRecord, cost = new SessionCost(WINDOW_MS)): void {
    const actor = new SessionActor({
      record,
      hostId: this.parts.id,
      records: this.parts.records,
      rows: this.parts.rows,
      resources: this.parts.resources,
      heartbeatMs: this.parts.config.heartbeatSeconds * 1000,
      log: this.parts.log,
      cost,
      onGone: (id) => {
        this.actors.delete(id);
        this.costs.delete(id);
        this.departed.set(cost, Date.now());
        this.updateCapacity();
      },
    });
    this.actors.set(record.id, actor);
    this.costs.set(record.id, cost);
    this.updateCapacity();
    actor.start();
  }

  private async watchSessions(): Promise<void> {
    await this.parts.records.watch((record) => {
      this.parts.admission.quotas.observe(record);
      if (record.state === 'active') this.active.set(record.id, record);
      else this.active.delete(record.id);
      if (record.deletingSince !== undefined) this.deleting.set(record.id, record.deletingSince);
      else this.deleting.delete(record.id);
      this.actors.get(record.id)?.send({ type: 'record', record });
    });
  }

  private async takeOverStale(): Promise<void> {
    if (this.takingOver) return;
    this.takingOver = true;
    try {
      const takeoverMs = this.parts.config.takeoverSeconds * 1000;
      // An owner that could not write its heartbeat was not gone: wait until it has had a whole
      // takeover period of a writable bucket to show it is alive, counted from when a heartbeat
      // it sent while the bucket had no leader has failed (a write gets one heartbeat period)
      // and can be sent again.
      const grace = takeoverMs + this.parts.config.heartbeatSeconds * 1000;
      if ((await this.leaseClock.writableFor()) < grace) return;
      await this.takeOver(takeoverMs);
      await this.resumeDeletions();
    } finally {
      this.takingOver = false;
    }
  }

  private async takeOver(takeoverMs: number): Promise<void> {
    for (const record of this.active.values()) {
      // A takeover obeys the same room as a create: a host that is full leaves it to another.
      if (this.stopping || !this.room().fits) return;
      if (this.actors.has(record.id) || !isStale(record, takeoverMs)) continue;
      const claimed = await takeOver(this.parts.records, record.id, this.parts.id, takeoverMs);
      if (!claimed) continue;
      this.parts.log.info({ session: record.id, previousOwner: record.owner }, 'took over a session whose host stopped');
      this.startActor(claimed);
    }
  }

  private async resumeDeletions(): Promise<void> {
    for (const [id, since] of this.deleting) {
      if (this.stopping) return;
      if (Date.now() - since < ABANDONED_MS) continue;
      // Taking it again writes a new deletingSince, which the watch brings back here.
      this.deleting.delete(id);
      await resumeDeletion(this.parts.nc, this.parts.records, id, this.parts.log, this.parts.metrics.bus);
    }
  }

  /** Stops every worker but leaves the sessions active: another host takes them over. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearInterval(this.takeoverTimer);
    clearInterval(this.loadTimer);
    this.updateCapacity();
    for (const sub of this.subscriptions) sub.unsubscribe();
    await Promise.all([...this.actors.values()].map((actor) => {
      actor.send({ type: 'leave' });
      return actor.settled();
    }));
    await closeHostParts(this.parts);
  }
}

// The running service a fuzz run aims at: two users, each with a session whose stream points
// at a closed loopback port (the worker keeps reconnecting and no media is ever analysed), the
// processes to keep an eye on, and the state a rejected request must leave as it was.
import type { Service } from '../stack/process.ts';
import { freePort } from '../stack/ports.ts';
import type { Services } from '../support/services.ts';

/** What a request could change, reduced to what must not change when it is refused. */
export interface Snapshot {
  /** The first user's sessions: id, name, state. */
  sessions: string[][];
  own: SessionState | undefined;
  others: SessionState | undefined;
}

interface SessionState {
  name: string;
  state: string;
  sources: string[];
}

export class FuzzTarget {
  /** The state after the last case, to compare the next refused one against. */
  last!: Snapshot;
  private readonly dead = new Map<string, number | NodeJS.Signals | null>();

  private constructor(
    readonly services: Services,
    readonly port: number,
    readonly streamUri: string,
    /** A session of the first user (alice), and one of the second (bob). */
    readonly own: string,
    readonly others: string,
    /** Sources registered on `own`. */
    readonly sources: string[],
  ) {
    const processes: Service[] = [services.gateway, services.storage, ...services.hosts];
    for (const process of processes) void process.exited.then((code) => this.dead.set(process.name, code));
  }

  static async prepare(services: Services): Promise<FuzzTarget> {
    const streamUri = `rtmp://127.0.0.1:${await freePort()}/live/fuzz`;
    const create = async (token: string) => {
      const reply = await services.api('POST', '/v1/sessions', { token, body: { name: 'fuzz target', streamUri } });
      if (reply.status !== 201) throw new Error(`could not create the fuzz session: ${reply.status} ${JSON.stringify(reply.body)}`);
      return reply.body._id as string;
    };
    const own = await create(services.users.alice.token);
    const others = await create(services.users.bob.token);
    const sources: string[] = [];
    for (const format of ['text', 'scalar']) {
      const reply = await services.api('POST', `/v1/sessions/${own}/events`, { body: { name: `fuzz ${format}`, format } });
      if (reply.status !== 201) throw new Error(`could not register a source: ${reply.status} ${JSON.stringify(reply.body)}`);
      sources.push(reply.body.id);
    }
    const target = new FuzzTarget(services, Number(new URL(services.baseUrl).port), streamUri, own, others, sources);
    target.last = await target.snapshot();
    return target;
  }

  get tokens(): { alice: string; bob: string } {
    return { alice: this.services.users.alice.token, bob: this.services.users.bob.token };
  }

  /** The processes that have exited, with their exit codes; empty while all of them run. */
  deadProcesses(): string[] {
    return [...this.dead].map(([name, code]) => `${name} exited (${code})`);
  }

  async snapshot(): Promise<Snapshot> {
    const { api } = this.services;
    const session = async (id: string, token: string): Promise<SessionState | undefined> => {
      const reply = await api('GET', `/v1/sessions/${id}`, { token });
      if (reply.status !== 200) return undefined;
      const { name, state, sources } = reply.body;
      return { name, state, sources: sources.map((source: { id: string; name: string }) => `${source.id}:${source.name}`) };
    };
    const list = await api('GET', '/v1/sessions?limit=100', { token: this.tokens.alice });
    if (list.status !== 200) throw new Error(`the session list answers ${list.status}: ${JSON.stringify(list.body)}`);
    return {
      sessions: list.body.data.map((s: { _id: string; name: string; state: string }) => [s._id, s.name, s.state]),
      own: await session(this.own, this.tokens.alice),
      others: await session(this.others, this.tokens.bob),
    };
  }
}

/** The service's settings for a fuzz run: budgets out of the way, sessions that never end on their own during it. */
export const FUZZ_ENV: Record<string, string> = {
  RATE_LIMIT_REQUESTS: '100000000',
  AUTH_FAILURES_PER_MINUTE: '100000000',
  WS_UNAUTHENTICATED_PER_ADDRESS: '1000',
  WS_MESSAGES_PER_MINUTE: '1000000',
  WS_UPGRADES_PER_ADDRESS_PER_MINUTE: '100000000',
  STREAM_UNREACHABLE_SECONDS: '86400',
};

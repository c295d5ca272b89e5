// Abuse scenarios run as two users at once: one user abuses the service while another uses it
// as a client ordinarily does, and each one's answers are tallied. The abuser must get only
// the answers its abuse deserves, and the bystander only the answers it gets alone.
//   churn:        the abuser creates and stops sessions back to back, several at a time
//                 (admission by reserved cost: a stopped session holds no room, so never 503).
//   delete-flood: the abuser sends many DELETEs of each of its finished sessions at once
//                 (one purge per session: one 204, the others 404 or 409).
import type { Reply, Services } from '../support/services.ts';

/** Answers by "METHOD route status", counted. */
export type Tally = Record<string, number>;

export interface ScenarioReport {
  name: string;
  abuser: Tally;
  bystander: Tally;
  failures: string[];
}

const STREAM = 'rtmp://127.0.0.1:9/live/abuse';

class User {
  readonly tally: Tally = {};
  constructor(
    private readonly services: Services,
    private readonly token: string,
  ) {}

  async send(method: string, route: string, path: string, body?: unknown): Promise<Reply> {
    const reply = await this.services.api(method, path, { token: this.token, body });
    const key = `${method} ${route} ${reply.status}`;
    this.tally[key] = (this.tally[key] ?? 0) + 1;
    return reply;
  }

  async finishedSession(name: string): Promise<string | undefined> {
    const created = await this.send('POST', '/v1/sessions', '/v1/sessions', { name, streamUri: STREAM });
    if (created.status !== 201) return undefined;
    await this.send('POST', '/v1/sessions/:id/stop', `/v1/sessions/${created.body._id}/stop`);
    return created.body._id;
  }
}

/** What an ordinary client does, again and again until `done`: create, read, list, stop, delete. */
async function ordinaryUse(user: User, done: () => boolean): Promise<void> {
  for (let i = 0; !done(); i++) {
    const id = await user.finishedSession(`ordinary ${i}`);
    if (!id) continue;
    await user.send('GET', '/v1/sessions/:id', `/v1/sessions/${id}`);
    await user.send('GET', '/v1/sessions', '/v1/sessions?limit=10');
    await user.send('DELETE', '/v1/sessions/:id', `/v1/sessions/${id}`);
  }
}

/** Every answer in `tally` is one of `allowed`'s statuses for its route. */
function unexpected(who: string, tally: Tally, allowed: Record<string, number[]>): string[] {
  return Object.entries(tally)
    .filter(([key]) => {
      const [method, route, status] = key.split(' ');
      return !(allowed[`${method} ${route}`] ?? []).includes(Number(status));
    })
    .map(([key, count]) => `${who} got ${key} ${count} times`);
}

const ORDINARY: Record<string, number[]> = {
  'POST /v1/sessions': [201],
  'POST /v1/sessions/:id/stop': [200],
  'GET /v1/sessions/:id': [200],
  'GET /v1/sessions': [200],
  'DELETE /v1/sessions/:id': [204],
};

async function scenario(
  name: string,
  services: Services,
  abuse: (abuser: User) => Promise<string[]>,
  abuserAllowed: Record<string, number[]>,
): Promise<ScenarioReport> {
  const abuser = new User(services, services.users.alice.token);
  const bystander = new User(services, services.users.bob.token);
  let over = false;
  const ordinary = ordinaryUse(bystander, () => over);
  const failures = await abuse(abuser).finally(() => (over = true));
  await ordinary;
  failures.push(...unexpected('the abuser', abuser.tally, abuserAllowed), ...unexpected('the bystander', bystander.tally, ORDINARY));
  return { name, abuser: abuser.tally, bystander: bystander.tally, failures };
}

export async function churn(services: Services, rounds = 40, parallel = 4): Promise<ScenarioReport> {
  return scenario('churn', services, async (abuser) => {
    await Promise.all(Array.from({ length: parallel }, async (_, lane) => {
      for (let i = lane; i < rounds; i += parallel) await abuser.finishedSession(`churn ${i}`);
    }));
    return [];
  }, { 'POST /v1/sessions': [201], 'POST /v1/sessions/:id/stop': [200] });
}

export async function deleteFlood(services: Services, sessions = 5, flood = 50): Promise<ScenarioReport> {
  return scenario('delete-flood', services, async (abuser) => {
    const failures: string[] = [];
    for (let i = 0; i < sessions; i++) {
      const id = await abuser.finishedSession(`flooded ${i}`);
      if (!id) continue;
      const replies = await Promise.all(Array.from({ length: flood }, () => abuser.send('DELETE', '/v1/sessions/:id', `/v1/sessions/${id}`)));
      const deleted = replies.filter((reply) => reply.status === 204).length;
      if (deleted !== 1) failures.push(`session ${id}: ${deleted} of ${flood} DELETEs answered 204, not one`);
    }
    return failures;
  }, { 'POST /v1/sessions': [201], 'POST /v1/sessions/:id/stop': [200], 'DELETE /v1/sessions/:id': [204, 404, 409] });
}

export function printReport({ name, abuser, bystander, failures }: ScenarioReport): string {
  const lines = (tally: Tally) => Object.entries(tally).sort().map(([key, count]) => `    ${key}: ${count}`);
  return [
    `scenario ${name}: ${failures.length ? `FAILED\n  ${failures.join('\n  ')}` : 'passed'}`,
    '  the abuser saw:', ...lines(abuser),
    '  the bystander saw:', ...lines(bystander),
  ].join('\n');
}

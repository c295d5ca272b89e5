// Abuse scenarios run as two users at once: one user abuses the service while another uses it
// as a client ordinarily does, and each one's answers are tallied. The abuser must get only
// the answers its abuse deserves, and the bystander only the answers it gets alone.
//   churn:        the abuser creates and stops sessions back to back, several at a time
//                 (admission by reserved cost: a stopped session holds no room, so never 503).
//   delete-flood: the abuser sends many DELETEs of each of its finished sessions at once
//                 (one purge per session: one 204, the others 404 or 409).
//   large-records: the abuser makes, loads with sources, stops and deletes sessions of the
//                 largest record allowed (a 2,048-character stream URI, a 256-character name,
//                 32 sources of 256-character names), back to back.
//   rename-flood: the abuser renames each of its finished sessions many times at once (each
//                 rename answered 200, or 409 for a change that lost to another, or 429).
//   fan-out:      the abuser opens many sockets, subscribes each many times to its session's
//                 custom events (past the per-user bound: 429) and posts events to them.
import { PATHS } from '../../gateway/ws/protocol.ts';
import type { Reply, Services } from '../support/services.ts';
import { WsClient } from '../support/ws-client.ts';

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

// The largest values a session record may hold (SPEC: names of 256 characters; the gateway:
// URIs of 2,048, SESSION_MAX_SOURCES sources).
const LONGEST_URI = STREAM.replace('/abuse', '/').padEnd(2048, 'k');
const LONGEST_NAME = 'n'.repeat(256);
const MOST_SOURCES = 32;

export async function largeRecords(services: Services, rounds = 20): Promise<ScenarioReport> {
  return scenario('large-records', services, async (abuser) => {
    for (let i = 0; i < rounds; i++) {
      const created = await abuser.send('POST', '/v1/sessions', '/v1/sessions', { name: LONGEST_NAME, streamUri: LONGEST_URI });
      if (created.status !== 201) continue;
      const id = created.body._id as string;
      for (let source = 0; source < MOST_SOURCES; source++) {
        await abuser.send('POST', '/v1/sessions/:id/events', `/v1/sessions/${id}/events`, { name: `${source}`.padEnd(256, 's'), format: 'text' });
      }
      await abuser.send('POST', '/v1/sessions/:id/stop', `/v1/sessions/${id}/stop`);
      await abuser.send('DELETE', '/v1/sessions/:id', `/v1/sessions/${id}`);
    }
    return [];
  }, {
    'POST /v1/sessions': [201, 429],
    // A session that has ended takes no new source: its stream, unreachable, may end it first.
    'POST /v1/sessions/:id/events': [201, 409, 429],
    'POST /v1/sessions/:id/stop': [200, 429],
    'DELETE /v1/sessions/:id': [204, 429],
  });
}

export async function renameFlood(services: Services, sessions = 3, flood = 50): Promise<ScenarioReport> {
  return scenario('rename-flood', services, async (abuser) => {
    const failures: string[] = [];
    for (let i = 0; i < sessions; i++) {
      const id = await abuser.finishedSession(`renamed ${i}`);
      if (!id) continue;
      const names = Array.from({ length: flood }, (_, n) => `renamed ${i}.${n}`);
      const replies = await Promise.all(names.map((name) => abuser.send('PATCH', '/v1/sessions/:id', `/v1/sessions/${id}`, { name })));
      const renamed = replies.filter((reply) => reply.status === 200);
      if (renamed.length === 0) failures.push(`session ${id}: none of ${flood} renames answered 200`);
      // The last rename answered 200 is the name kept, whichever order they were taken in: a
      // read after all answers shows one of the names answered 200.
      const read = await abuser.send('GET', '/v1/sessions/:id', `/v1/sessions/${id}`);
      if (!renamed.some((reply) => reply.body?.name === read.body?.name)) failures.push(`session ${id} reads as "${read.body?.name}", a name no rename was answered 200 with`);
    }
    return failures;
  }, {
    'POST /v1/sessions': [201],
    'POST /v1/sessions/:id/stop': [200],
    'PATCH /v1/sessions/:id': [200, 409, 429],
    'GET /v1/sessions/:id': [200],
  });
}

export async function fanOut(services: Services, sockets = 20, subscribesEach = 10, seconds = 10): Promise<ScenarioReport> {
  return scenario('fan-out', services, async (abuser) => {
    const created = await abuser.send('POST', '/v1/sessions', '/v1/sessions', { name: 'fan-out', streamUri: STREAM });
    if (created.status !== 201) return [`the fan-out session was not created: ${created.status}`];
    const id = created.body._id as string;
    const source = await abuser.send('POST', '/v1/sessions/:id/events', `/v1/sessions/${id}/events`, { name: 'fan-out', format: 'text' });
    if (source.status !== 201) return [`the fan-out source was not registered: ${source.status}`];
    const url = `${services.baseUrl.replace(/^http/, 'ws')}/ws/v1`;
    const clients: WsClient[] = [];
    try {
      for (let i = 0; i < sockets; i++) clients.push(await WsClient.connect(url, services.users.alice.token));
      const answers = await Promise.all(clients.flatMap((client) =>
        Array.from({ length: subscribesEach }, () => client.request(PATHS.subscribe, { channel: 'session_custom_events', key: `${id}:1s` }))));
      for (const answer of answers) abuser.tally[`WS ${PATHS.subscribe} ${answer.status}`] = (abuser.tally[`WS ${PATHS.subscribe} ${answer.status}`] ?? 0) + 1;
      for (let second = 0; second < seconds; second++) {
        const events = Array.from({ length: 200 }, (_, n) => ({ time: second + n / 200, data: `${second}:${n}:`.padEnd(200, 'x') }));
        await abuser.send('POST', '/v1/sessions/:id/events/:sourceId', `/v1/sessions/${id}/events/${source.body.id}`, events);
      }
    } finally {
      for (const client of clients) client.close();
    }
    await abuser.send('POST', '/v1/sessions/:id/stop', `/v1/sessions/${id}/stop`);
    return [];
  }, {
    'POST /v1/sessions': [201],
    'POST /v1/sessions/:id/events': [201],
    'POST /v1/sessions/:id/events/:sourceId': [201, 429],
    'POST /v1/sessions/:id/stop': [200],
    // Past the per-user bound of subscriptions (WS_SUBSCRIPTIONS_PER_USER): refused, 429.
    [`WS ${PATHS.subscribe}`]: [200, 429],
  });
}

export function printReport({ name, abuser, bystander, failures }: ScenarioReport): string {
  const lines = (tally: Tally) => Object.entries(tally).sort().map(([key, count]) => `    ${key}: ${count}`);
  return [
    `scenario ${name}: ${failures.length ? `FAILED\n  ${failures.join('\n  ')}` : 'passed'}`,
    '  the abuser saw:', ...lines(abuser),
    '  the bystander saw:', ...lines(bystander),
  ].join('\n');
}

// Every change request gets a decision within its deadline, on a busy host too: 200/201, 409
// for a change that truly conflicts, 429 for the quota, or a 503 the host itself decided, with
// Retry-After; never a 500 and never the gateway's own bus timeout ("request timed out"), which
// tells the client nothing. A spinning child process keeps one of the cores busy meanwhile.
import { spawn, type ChildProcess } from 'node:child_process';
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { startServices, type Reply, type Services } from '../../ops/support/services.ts';

// Nothing listens there: the workers keep reconnecting, which is all these tests need.
const STREAM = 'rtmp://127.0.0.1:9/live/x';
let services: Services;
let spinner: ChildProcess | undefined;

test.before(async () => {
  services = await startServices({ name: 'sessions-answers' });
  spinner = spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' });
});

test.after(async () => {
  if (spinner?.pid !== undefined) process.kill(spinner.pid);
  await services?.stop();
});

const create = (token: string, name: string) => services.api('POST', '/v1/sessions', { body: { name, streamUri: STREAM }, token });
const rename = (token: string, id: string, name: string) => services.api('PATCH', `/v1/sessions/${id}`, { body: { name }, token });

/** What a reply says, for an assertion message. */
const shown = (reply: Reply) => `${reply.status} ${JSON.stringify(reply.body)} Retry-After ${reply.headers.get('retry-after')}`;

/**
 * A 503 the hosts decided: the API's error body with a Retry-After, not the gateway's bus
 * timeout. `unavailable`: a host could not finish in time; `overloaded`: no host had room for a
 * create (the busy core and the burst's reservations can fill a two-core host), with when one expects it.
 */
function decided503(reply: Reply): boolean {
  return (
    reply.status === 503 &&
    Number(reply.headers.get('retry-after')) >= 1 &&
    ['unavailable', 'overloaded'].includes(reply.body?.code) &&
    !/timed out/.test(reply.body?.message)
  );
}

/**
 * Gives the host's room back to the next test. A stop answered 503 is asked again, as a client
 * would, whichever 503: new sessions spawn their stream probes on the host's main thread, and
 * a burst of them can hold it past a stop's whole wait (see docs/architecture.md).
 */
async function stopAll(token: string, ids: string[]): Promise<void> {
  for (const id of ids) {
    for (let attempt = 0; attempt < 20; attempt++) {
      const stop = await services.api('POST', `/v1/sessions/${id}/stop`, { token });
      if (stop.status === 200 || stop.status === 400) break;
      assert.is(stop.status, 503, shown(stop));
    }
  }
}

test('one user floods renames of a session while another renames theirs: no 500, the other user all 200', async () => {
  const { alice, bob } = services.users;
  const flooded = await create(alice.token, 'flooded');
  const quiet = await create(bob.token, 'quiet');
  assert.is(flooded.status, 201, shown(flooded));
  assert.is(quiet.status, 201, shown(quiet));
  const floods: Reply[] = [];
  const others: Reply[] = [];
  await Promise.all([
    (async () => {
      for (let round = 0; round < 4; round++) {
        floods.push(...(await Promise.all(Array.from({ length: 8 }, (_, i) => rename(alice.token, flooded.body._id, `flood ${round}.${i}`)))));
      }
    })(),
    (async () => {
      for (let i = 0; i < 8; i++) others.push(await rename(bob.token, quiet.body._id, `quiet ${i}`));
    })(),
  ]);
  for (const reply of floods) assert.ok(reply.status === 200 || reply.status === 409 || decided503(reply), shown(reply));
  for (const reply of others) assert.is(reply.status, 200, shown(reply));
  // The last rename that landed is the name: the session is one of the names asked for.
  const after = await services.api('GET', `/v1/sessions/${flooded.body._id}`, { token: alice.token });
  assert.match(after.body.name, /^flood \d\.\d$/);
  assert.is((await services.api('GET', `/v1/sessions/${quiet.body._id}`, { token: bob.token })).body.name, 'quiet 7');
  await stopAll(alice.token, [flooded.body._id]);
  await stopAll(bob.token, [quiet.body._id]);
});

test('10 creates of one user at once with a core kept busy: each 201, a quota 429 or a decided 503', async () => {
  const { alice } = services.users;
  for (let round = 0; round < 3; round++) {
    const replies = await Promise.all(Array.from({ length: 10 }, (_, i) => create(alice.token, `camera ${round}.${i}`)));
    for (const reply of replies) {
      const quota = reply.status === 429 && reply.body.code === 'quota_exceeded';
      assert.ok(reply.status === 201 || quota || decided503(reply), shown(reply));
    }
    await stopAll(alice.token, replies.filter((reply) => reply.status === 201).map((reply) => reply.body._id));
  }
});

test.run();

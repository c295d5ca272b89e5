// A cluster with no free slot answers 503 at once, and takes sessions again as soon as one ends.
import { readdirSync, readFileSync } from 'node:fs';
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { waitUntil } from '../../ops/stack/process.ts';
import { parsePrometheusText, total } from '../../ops/support/prometheus-text.ts';
import { startServices, type Services } from '../../ops/support/services.ts';
import { httpRequest } from '../../ops/stack/http-client.ts';

const STREAM = 'rtmp://127.0.0.1:9/live/x';
let services: Services;

test.before(async () => {
  services = await startServices({ name: 'sessions-capacity', env: { HOST_CAPACITY: '1', STREAM_UNREACHABLE_SECONDS: '900' } });
});

test.after(async () => {
  await services?.stop();
});

const create = (name: string) => services.api('POST', '/v1/sessions', { body: { name, streamUri: STREAM } });
const count = async () => (await services.api('GET', '/v1/sessions?limit=100')).body.data.length;

test('creates arriving together at the last free slot: one takes it, the others are refused at once as overloaded', async () => {
  const started = performance.now();
  const replies = await Promise.all(Array.from({ length: 6 }, (_, i) => create(`together ${i}`)));
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  const answers = replies.map((reply) => (reply.status === 201 ? 201 : `${reply.status} ${reply.body.code}`));
  // Taking the slot closes the host to creates while the others are on their way to it: each is
  // answered by the host's own check, none waits out the bus timeout as `unavailable`.
  assert.equal(answers.sort(), [201, ...Array(5).fill('503 overloaded')], `answers after ${seconds} s: ${JSON.stringify(answers)}`);
  const taken = replies.find((reply) => reply.status === 201)!;
  assert.is((await services.api('POST', `/v1/sessions/${taken.body._id}/stop`)).status, 200);
  await waitUntil('the host has no session', async () => {
    const samples = parsePrometheusText(await (await httpRequest(`${services.metrics.hosts[0]}/metrics`)).text);
    return total(samples, 'emo_sessions_active') === 0;
  }, 15_000);
});

test('a full cluster answers 503 overloaded, not a timeout; a stop frees the slot', async () => {
  const before = await count();
  const first = await create('first');
  assert.is(first.status, 201, JSON.stringify(first.body));

  const refused = await create('second');
  assert.is(refused.status, 503, JSON.stringify(refused.body));
  assert.equal(Object.keys(refused.body).sort(), ['code', 'error', 'message', 'status']);
  assert.equal([refused.body.error, refused.body.status, refused.body.code], [true, 503, 'overloaded']);
  // `overloaded` says no host had room; a request that waited for the bus timeout would be `unavailable`.
  assert.is(await count(), before + 1, 'the refused request created nothing');

  const stopped = await services.api('POST', `/v1/sessions/${first.body._id}/stop`);
  assert.is(stopped.status, 200);
  let again = refused;
  await waitUntil('a free slot', async () => {
    again = await create('third');
    return again.status !== 503;
  }, 15_000);
  assert.is(again.status, 201, JSON.stringify(again.body));
  assert.is(again.body.state, 'active');
  assert.is(await count(), before + 2);
});

/** The nice value of each thread of a process, by thread id (field 19 of /proc/<pid>/task/<tid>/stat). */
function threadNiceValues(pid: number): Map<number, number> {
  const nice = new Map<number, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    nice.set(Number(tid), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]));
  }
  return nice;
}

test('face analysis gives way when the cores are full: its thread runs 10 nice steps down, the others do not', () => {
  const host = services.hosts[0]!.pid;
  const nice = threadNiceValues(host);
  const threads = JSON.stringify([...nice]);
  assert.is(nice.get(host), 0, 'the main thread, which reads the pipes');
  const lowered = [...nice.keys()].filter((tid) => nice.get(tid) !== 0);
  assert.ok(lowered.length > 0 && lowered.every((tid) => nice.get(tid) === 10), threads);
  // The host starts the face thread first (what it creates inherits its nice value), then the
  // voice thread, which stays at the host's, as the transcription threads do once speech starts them.
  const startedAfter = [...nice.keys()].filter((tid) => tid > Math.min(...lowered) && nice.get(tid) === 0);
  assert.ok(startedAfter.length >= 1, threads);
});

test.run();

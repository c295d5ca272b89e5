// The session actor and the session records against real NATS KV and ClickHouse, in this process.
import { join } from 'node:path';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { EgressPolicy } from '../../actors/egress/policy.ts';
import { DecoderSpawner } from '../../actors/ingest/decoder-spawner.ts';
import { streamResolver } from '../../actors/egress/resolver.ts';
import { RowPublisher } from '../../actors/rows.ts';
import { SessionActor } from '../../actors/session/actor.ts';
import { isStale, takeOver } from '../../actors/session/lifecycle.ts';
import type { Child } from '../../actors/supervisor.ts';
import { FaceThread } from '../../actors/face/threaded.ts';
import { VoiceThread } from '../../actors/voice/threaded.ts';
import type { WorkerResources } from '../../actors/session/worker.ts';
import { thisProcessorMultipliesSignedBytesExactly } from '../../actors/models/signed-byte-products.ts';
import { SpeechToText } from '../../actors/speech/moonshine.ts';
import { readConfig } from '../../bus/config.ts';
import { connectBus } from '../../bus/connection.ts';
import { SessionRecords, UNCHANGED } from '../../bus/session-records.ts';
import type { SessionRecord } from '../../bus/contracts/session.ts';
import { newId, newSessionId } from '../../bus/ids.ts';
import { createLog } from '../../bus/log.ts';
import { waitUntil } from '../../ops/stack/process.ts';
import { ensureRowsStream } from '../../storage/writer/rows-stream.ts';

const config = readConfig();
const signedWeights = thisProcessorMultipliesSignedBytesExactly();
const log = createLog(config);

const quiet = log.child({ test: 'actors-session' }, { level: 'silent' });
let nc: NatsConnection;
let records: SessionRecords;
let rows: RowPublisher;
let resources: WorkerResources;
const TAKEOVER_MS = config.takeoverSeconds * 1000;
const actors: SessionActor[] = [];
/** Every session made here: ended at the end, so that no later test's host takes one over. */
const made: string[] = [];

function record(overrides: Partial<SessionRecord> = {}): SessionRecord {
  const now = Date.now();
  const id = newSessionId(now);
  made.push(id);
  return {
    id,
    name: 'actor test',
    type: 'live_analysis',
    state: 'active',
    createdAt: now,
    user: 'actor-tests',
    product: 'tests',
    streamUri: 'rtmp://127.0.0.1:9/live/none',
    sensors: [],
    owner: 'host-a',
    expiresAt: now + 3_600_000,
    healthCheckAt: now,
    workerState: 'starting',
    mediaSeconds: 0,
    ...overrides,
  };
}

/** A worker that idles until stopped, or crashes after `crashAfterMs`. */
const idleWorker = (crashAfterMs?: number) => (): Child => {
  let stop!: () => void;
  const done = new Promise<void>((resolve, reject) => {
    stop = resolve;
    if (crashAfterMs !== undefined) setTimeout(() => reject(new Error('worker crashed on purpose')), crashAfterMs);
  });
  return { done, stop: async () => stop() };
};

function startActor(r: SessionRecord, startWorker: () => Child, gone: (id: string) => void = () => {}) {
  const actor = new SessionActor({
    record: r,
    hostId: r.owner ?? 'host-a',
    records,
    rows,
    resources,
    heartbeatMs: config.heartbeatSeconds * 1000,
    log: quiet,
    onGone: gone,
    startWorker,
    supervision: { intensity: 2, periodMs: 60_000, backoffMs: 10, maxBackoffMs: 20, shutdownMs: 5000 },
  });
  actors.push(actor);
  actor.start();
  return actor;
}

test.before(async () => {
  nc = await connectBus('actors-session test', config.natsUrl, log);
  await ensureRowsStream(await jetstreamManager(nc), { maxBytes: config.rowsStreamMaxBytes, replicas: config.natsReplicas });
  rows = new RowPublisher(jetstream(nc), quiet);
  records = await SessionRecords.open(jetstream(nc), quiet, config.natsReplicas);
  resources = {
    faces: await FaceThread.start({ modelsDir: config.modelsDir, effortCalmMs: config.faceEffortCalmSeconds * 1000 }),
    speechToText: await SpeechToText.load(config.modelsDir, 'tiny', signedWeights),
    voice: await VoiceThread.start({ modelsDir: config.modelsDir, maxBacklogSeconds: config.voiceMaxBacklogSeconds }),
    egress: new EgressPolicy({ kind: 'none' }, config.egressGuardLibrary, streamResolver({ servers: config.streamDnsServers, timeoutMs: config.streamDnsTimeoutMs })),
    pull: {
      ffmpegPath: config.ffmpegPath,
      decoders: await DecoderSpawner.start({ runDir: join(config.varDir, 'run'), log: quiet }),
      fps: config.analysisFps,
      unreachableSeconds: 5,
      tls: { verify: true },
      transcriptionQueueLimit: 8,
    },
  };
});

test.after(async () => {
  for (const actor of actors) actor.send({ type: 'leave' });
  await Promise.all(actors.map((actor) => actor.settled()));
  await Promise.all(made.map((id) => records.update(id, (r) => (r.state === 'active'
    ? { ...r, state: 'finished', workerState: 'stopped', stopReason: 'client', finishedAt: Date.now() }
    : UNCHANGED))));
  await resources.voice.close();
  await resources.faces.close();
  await resources.pull.decoders.close();
  await nc.drain();
});

test('compare-and-set: concurrent changes are all kept, a stale revision is refused', async () => {
  const created = await records.create(record());
  const names = Array.from({ length: 6 }, (_, i) => `sensor-${i}`);
  await Promise.all(
    names.map((name) =>
      records.update(created.record.id, (r) => ({
        ...r,
        sensors: [...r.sensors, { id: newId(), name, type: 'generic_sensor', device: 'generic_sensor', format: 'text' }],
      })),
    ),
  );
  const after = await records.fresh(created.record.id);
  assert.equal(after?.record.sensors.map((s) => s.name).sort(), names);
  assert.not.ok(await records.remove(created.record.id, created.revision), 'a change on a stale revision is refused');
  assert.ok(await records.fresh(created.record.id));
});

test('only one host wins the takeover of a stale session', async () => {
  const stale = record({ owner: 'dead-host', healthCheckAt: Date.now() - 3_600_000 });
  await records.create(stale);
  assert.ok(isStale(stale, TAKEOVER_MS));
  const claims = await Promise.all(['host-b', 'host-c', 'host-d'].map((host) => takeOver(records, stale.id, host, TAKEOVER_MS)));
  const winners = claims.filter((claim) => claim !== undefined);
  assert.is(winners.length, 1);
  const now = await records.fresh(stale.id);
  assert.is(now?.record.owner, winners[0]?.owner);
  assert.is(await takeOver(records, stale.id, 'host-e', TAKEOVER_MS), undefined, 'a fresh owner cannot be displaced');
});

test('the heartbeat advances meta.healthCheck while the actor owns the session', async () => {
  const r = record();
  await records.create(r);
  startActor(r, idleWorker());
  await waitUntil('heartbeat', async () => ((await records.fresh(r.id))?.record.healthCheckAt ?? 0) > r.healthCheckAt, (config.heartbeatSeconds + 3) * 1000);
});

test('an expired session is finished with stopReason expired', async () => {
  const r = record({ expiresAt: Date.now() + 500 });
  await records.create(r);
  let gone = false;
  startActor(r, idleWorker(), () => (gone = true));
  await waitUntil('expiry', async () => (await records.fresh(r.id))?.record.state === 'finished', (config.heartbeatSeconds + 5) * 1000);
  const finished = (await records.fresh(r.id))?.record;
  assert.is(finished?.stopReason, 'expired');
  assert.is(finished?.workerState, 'stopped');
  // It lets go once its worker has stopped, a moment after the record says finished.
  await waitUntil('the actor to let go of the session', async () => gone, 10_000);
});

test('a worker that keeps crashing is given up on: the session ends as worker_failed', async () => {
  const r = record();
  await records.create(r);
  let starts = 0;
  startActor(r, () => {
    starts++;
    return idleWorker(5)();
  });
  await waitUntil('escalation', async () => (await records.fresh(r.id))?.record.state === 'finished', 10_000);
  const finished = (await records.fresh(r.id))?.record;
  assert.is(finished?.stopReason, 'worker_failed');
  assert.is(finished?.workerState, 'failed');
  assert.match(finished?.failure ?? '', /crashed on purpose/);
  assert.is(starts, 3, 'started once and restarted twice (intensity 2) before giving up');
});

test('a session finished elsewhere makes its actor stop the worker', async () => {
  const r = record();
  await records.create(r);
  let stopped = false;
  const actor = startActor(r, () => {
    const child = idleWorker()();
    return { done: child.done, stop: async (graceMs) => { stopped = true; await child.stop(graceMs); } };
  });
  const finished = await records.update(r.id, (current) => ({ ...current, state: 'finished', stopReason: 'client', finishedAt: Date.now() }));
  actor.send({ type: 'record', record: finished!.record });
  await actor.settled();
  assert.ok(stopped, 'worker stopped');
});

test.run();

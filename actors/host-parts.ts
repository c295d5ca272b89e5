// The actor host's composition root: what a host is made of, built once at start and closed
// once at stop. The host's runtime (admission, room, takeovers, deletions) is host.ts.
import { join } from 'node:path';
import { jetstream } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { HostConfig } from '../bus/config.ts';
import { connectBus } from '../bus/connection.ts';
import type { Logger } from '../bus/log.ts';
import { SessionRecords } from '../bus/session-records.ts';
import { parseAllowance } from './egress/allowance.ts';
import { assertGuardLibrary } from './egress/guard-library.ts';
import { EgressPolicy } from './egress/policy.ts';
import { streamResolver } from './egress/resolver.ts';
import { FaceThread } from './face/threaded.ts';
import { DecoderSpawner } from './ingest/decoder-spawner.ts';
import { CpuUse } from './cpu-use.ts';
import { HostLoad, WINDOW_MS } from './host-load.ts';
import type { CostPart } from './session-cost.ts';
import type { HostMetrics } from './metrics.ts';
import { MODEL_FILES } from './models/files.ts';
import { assertModels } from './models/required.ts';
import { RowPublisher } from './rows.ts';
import type { WorkerResources } from './session/worker.ts';
import type { AdmissionDeps } from './session/admission.ts';
import { IdempotencyKeys } from './session/idempotency.ts';
import { UserQuotas } from './session/quotas.ts';
import { announceWorkerStates } from './session/worker-states.ts';
import { SpeechToTextPool } from './speech/pool.ts';
import { VoiceThread } from './voice/threaded.ts';

/** What a host is made of, built once by buildHostParts(). */
export interface HostParts {
  id: string;
  nc: NatsConnection;
  records: SessionRecords;
  rows: RowPublisher;
  admission: AdmissionDeps;
  resources: WorkerResources & { speechToText: SpeechToTextPool };
  config: HostConfig;
  log: Logger;
  metrics: HostMetrics;
  load: HostLoad;
  cpu: CpuUse;
}

/** Checks the models and the egress guard, starts the analysis threads, and joins the bus. */
export async function buildHostParts(config: HostConfig, rootLog: Logger, metrics: HostMetrics): Promise<HostParts> {
  const log = rootLog.child({ component: 'host' });
  const hostId = config.hostId;
  await assertModels(config.modelsDir, Object.values(MODEL_FILES));
  await assertGuardLibrary(config.egressGuardLibrary);
  // Before the models are loaded: its fork copies a host that is still small.
  const decoders = await DecoderSpawner.start({ runDir: join(config.varDir, 'run'), log });
  const load = new HostLoad();
  const resources = {
    faces: await FaceThread.start({
      modelsDir: config.modelsDir,
      effortCalmMs: config.faceEffortCalmSeconds * 1000,
      observeInference: metrics.observeInference,
      // Only a face thread that drops frames with every stream at its lowest effort makes the host behind.
      observeSaturated: (saturated, detail) => load.faceSaturated(saturated, detail),
      observeStreamEffort: (session, level, before, effort, chosenAmong) => {
        metrics.faceEffort(before, level);
        // Not `level`: that is the log line's own. Lowered for the thread's drops, the streams it
        // was the costliest of say why it and not another.
        const step = { session, stepsBelowFull: level, effort, ...(chosenAmong ? { chosenAmong } : {}) };
        if (level > before) log.warn(step, 'face analysis behind: reduced effort for a stream');
        else if (level > 0) log.info(step, 'face analysis keeps up better: more effort for a stream');
        else log.info({ session }, 'face analysis at full effort for a stream again');
      },
    }),
    speechToText: SpeechToTextPool.of(
      { modelsDir: config.modelsDir, noisyBelowSnrDb: config.noisySpeechBelowSnrDb },
      { threads: config.transcriptionThreads, timer: metrics.inference, spent: metrics.transcriptionCpu },
    ),
    voice: await VoiceThread.start({
      modelsDir: config.modelsDir,
      maxBacklogSeconds: config.voiceMaxBacklogSeconds,
      observeInference: metrics.observeInference,
    }),
    egress: new EgressPolicy(
      parseAllowance(config.allowPrivateStreamHosts),
      config.egressGuardLibrary,
      streamResolver({ servers: config.streamDnsServers, timeoutMs: config.streamDnsTimeoutMs }),
    ),
    pull: {
      ffmpegPath: config.ffmpegPath,
      decoders,
      fps: config.analysisFps,
      unreachableSeconds: config.streamUnreachableSeconds,
      tls: { verify: config.streamTlsVerify, caFile: config.streamTlsCaFile },
      transcriptionQueueLimit: config.transcriptionQueueLimit,
    },
    // What workers report reaches the metrics and the host's own view of its load.
    metrics: {
      videoSecond: (analysed: number, dropped: number) => metrics.videoSecond(analysed, dropped),
      speechSegmentDropped: (session: string) => {
        metrics.speechSegmentDropped(session);
        load.speechDropped(session);
      },
      speechWaited: (session: string, seconds: number) => {
        metrics.speechWaited(session, seconds);
        load.speechWaited(session, seconds);
      },
      reconnecting: () => metrics.reconnecting(),
      roomSpeech: (session: string, seconds: number) => metrics.roomSpeech(session, seconds),
      audioShed: (session: string, seconds: number) => {
        metrics.audioShed(session, seconds);
        load.audioShed(session, seconds);
      },
      sessionCpuSpent: (part: CostPart, seconds: number) => metrics.sessionCpuSpent(part, seconds),
    },
  };
  const nc = await connectBus(`actor-host ${hostId}`, config.natsUrl, log, { user: 'host' });
  const js = jetstream(nc);
  const rows = new RowPublisher(js, log, (session) => records.peek(session)?.record);
  const records = await SessionRecords.open(
    js,
    log,
    {
      replicas: config.natsReplicas,
      cacheBytes: config.sessionRecordCacheBytes,
      bucket: { maxBytes: config.sessionsBucketMaxBytes, maxAgeMs: config.sessionRecordMaxAgeSeconds * 1000 },
    },
    announceWorkerStates(nc),
  );
  const admission: AdmissionDeps = {
    records,
    quotas: await UserQuotas.open(js, records, config.userMaxActiveSessions, config.natsReplicas),
    keys: await IdempotencyKeys.open(js, config.idempotencyKeySeconds * 1000, config.natsReplicas),
    hostId,
    sessionMaxSeconds: config.sessionMaxSeconds,
    streamRefusal: (stream) => resources.egress.refusal(stream.hostname, stream.port),
  };
  const cpu = new CpuUse(WINDOW_MS);
  return { id: hostId, nc, records, rows, admission, resources, config, log, metrics, load, cpu };
}

/** Closes what buildHostParts() started, once every session of the host has settled. */
export async function closeHostParts(parts: HostParts): Promise<void> {
  await parts.resources.pull.decoders.close();
  parts.records.close();
  await parts.nc.drain();
  await parts.resources.speechToText.close();
  await parts.resources.voice.close();
  await parts.resources.faces.close();
}

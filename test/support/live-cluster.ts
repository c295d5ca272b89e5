// The whole service on a cluster (ops/stack/cluster.ts) with two live sessions on real RTMP
// streams, for the tests that take nodes away under them: the API through either gateway, the
// seconds of audio each session published as heard live on the bus, and a watch on reads.
// ClickHouse never merges (NO_MERGES), so a row stored twice stays to be counted.
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import * as assert from 'uvu/assert';
import { readConfig } from '../../bus/config.ts';
import { connectClickHouse, type ClickHouseClient } from '../../storage/clickhouse/clickhouse.ts';
import { startCluster, type Cluster } from '../../ops/stack/cluster.ts';
import { freePort } from '../../ops/stack/ports.ts';
import { waitUntil } from '../../ops/stack/process.ts';
import { publish, waitForStream, type Publisher } from '../../ops/support/streams/publish.ts';
import { startRtmpServer, type RtmpServer } from '../../ops/support/streams/rtmp-server.ts';
import { makeClip } from './clips.ts';
import { NO_MERGES } from './copies.ts';
import { httpRequest } from '../../ops/stack/http-client.ts';

export const DATABASE = 'emotions_cluster';
const NAMES = ['cluster-a', 'cluster-b'];

export interface Reply {
  status: number;
  body: any;
}

export interface Reads {
  statuses: Set<number>;
  /** The longest run of answers other than 200. */
  longestOutageMs: number;
  /** The slowest answer (or the client's timeout, for none). */
  slowestMs: number;
}

export interface LiveCluster {
  cluster: Cluster;
  nc: NatsConnection;
  jsm: JetStreamManager;
  /** Every ClickHouse node's HTTP endpoint, as the storage services use them. */
  clickhouse: ClickHouseClient;
  sessions: { id: string; uri: string }[];
  /** The seconds of audio rows each session published, as heard live on the bus, with how many times. */
  heard: Map<string, Map<number, number>>;
  api(base: string, method: string, path: string, body?: unknown): Promise<Reply>;
  /** The session as the first gateway that answers 200 has it. */
  session(id: string): Promise<any>;
  /** Waits until every session has written a heartbeat after `since` while working. */
  analysedAgain(since: number, timeoutMs: number): Promise<void>;
  /** Reads every session and its audio features through every gateway, four times a second, until stopped. */
  watchReads(): { stop(): Promise<Reads> };
  stop(): Promise<void>;
}

/** `name` names its folder under var/test; `env` is added to the services' environment. */
export async function startLiveCluster(name: string, env: NodeJS.ProcessEnv = {}): Promise<LiveCluster> {
  const config = readConfig();
  // A gateway answers 503 once a bus request has waited its timeout; a client waits twice that.
  const clientTimeoutMs = 2 * config.requestTimeoutMs;
  const token = `cluster-${randomBytes(6).toString('hex')}`;
  const dir = join(config.varDir, 'test', `${name}-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  const tokensFile = join(dir, 'tokens.json');
  writeFileSync(tokensFile, JSON.stringify([{ token, user: 'cluster-tester', product: 'tests' }]));
  const rtmp: RtmpServer = await startRtmpServer({ dir: join(dir, 'rtmp'), rtmpPort: await freePort(), rtmpsPort: await freePort() });
  const clip = await makeClip(
    { width: 640, height: 360, seconds: 6, fps: 15, container: 'flv', video: { type: 'testsrc' }, audio: { type: 'tones', tones: [{ hz: 220, seconds: 3 }, { hz: 330, seconds: 3 }] } },
    join(config.varDir, 'test', 'clips'),
  );
  const publishers: Publisher[] = [];
  let cluster: Cluster | undefined;
  let nc: NatsConnection | undefined;
  let clickhouse: ClickHouseClient | undefined;
  const stop = async () => {
    await clickhouse?.close();
    await nc?.close();
    await cluster?.stop();
    await Promise.all(publishers.map((publisher) => publisher.stop()));
    await rtmp.stop();
  };
  try {
    for (const stream of NAMES) {
      publishers.push(publish(clip, rtmp.url(stream)));
      await waitForStream(rtmp.url(stream));
    }
    cluster = await startCluster({
      dir,
      projectRoot: config.projectRoot,
      env: {
        ...process.env,
        CLICKHOUSE_DATABASE: DATABASE,
        AUTH_TOKENS_FILE: tokensFile,
        ALLOW_PRIVATE_STREAM_HOSTS: 'true',
        // The shipped heartbeat and takeover (3 s, 10 s): no host is lost here, and on a machine
        // loaded by the cluster stage a 4 s takeover took a session from a host that was only
        // slow for a moment, leaving a gap no ZooKeeper fault made.
        LOG_LEVEL: 'info',
        ...env,
      },
      clickhouseConfigFiles: NO_MERGES,
    });
    const started = cluster;
    nc = await connect({ servers: started.nats.url.split(','), maxReconnectAttempts: -1, reconnectTimeWait: 200 });
    const jsm = await jetstreamManager(nc);
    clickhouse = connectClickHouse({ url: started.clickhouse.urls.join(','), username: 'default', password: '' }, DATABASE);

    const api = async (base: string, method: string, path: string, body?: unknown): Promise<Reply> => {
      const { status, text } = await httpRequest(base + path, {
        method,
        headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(clientTimeoutMs),
      });
      return { status, body: text ? JSON.parse(text) : undefined };
    };
    const session = async (id: string): Promise<any> => {
      for (const gateway of started.gateways) {
        const reply = await api(gateway.baseUrl, 'GET', `/v1/sessions/${id}`).catch(() => undefined);
        if (reply?.status === 200) return reply.body;
      }
      return undefined;
    };
    const sessions: { id: string; uri: string }[] = [];
    const heard = new Map<string, Map<number, number>>();
    for (const stream of NAMES) {
      const uri = rtmp.url(stream);
      const created = await api(started.gateways[0]!.baseUrl, 'POST', '/v1/sessions', { name: stream, streamUri: uri });
      assert.is(created.status, 201, JSON.stringify(created.body));
      sessions.push({ id: created.body._id, uri });
      const seconds = new Map<number, number>();
      heard.set(created.body._id, seconds);
      nc.subscribe(`emo.rows.${created.body._id}.*.*.audio`, {
        callback: (_, msg) => {
          for (const row of msg.json<{ second: number }[]>()) seconds.set(row.second, (seconds.get(row.second) ?? 0) + 1);
        },
      });
    }
    const analysedAgain = (since: number, timeoutMs: number) =>
      waitUntil('every session analysed again', async () => {
        for (const { id } of sessions) {
          const current = await session(id);
          if (!(current?.meta.workerState === 'working' && Date.parse(current.meta.healthCheck) > since)) return false;
        }
        return true;
      }, timeoutMs);
    const watchReads = () => {
      const reads: Reads = { statuses: new Set(), longestOutageMs: 0, slowestMs: 0 };
      let outageStart: number | undefined;
      let running = true;
      const loop = (async () => {
        while (running) {
          for (const gateway of started.gateways) {
            for (const { id } of sessions) {
              for (const path of [`/v1/sessions/${id}`, `/v1/sessions/${id}/audio/features?granularity=5`]) {
                const asked = Date.now();
                const status = await api(gateway.baseUrl, 'GET', path).then((reply) => reply.status, () => 0);
                const now = Date.now();
                reads.statuses.add(status);
                reads.slowestMs = Math.max(reads.slowestMs, now - asked);
                if (status === 200) {
                  if (outageStart !== undefined) reads.longestOutageMs = Math.max(reads.longestOutageMs, now - outageStart);
                  outageStart = undefined;
                } else outageStart ??= now;
              }
            }
          }
          await sleep(250);
        }
      })();
      return {
        async stop() {
          running = false;
          await loop;
          if (outageStart !== undefined) reads.longestOutageMs = Math.max(reads.longestOutageMs, Date.now() - outageStart);
          return reads;
        },
      };
    };
    await analysedAgain(0, 60_000);
    return { cluster: started, nc, jsm, clickhouse, sessions, heard, api, session, analysedAgain, watchReads, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

// WebSocket fan-out: many clients subscribed to one session's channel at 1 s must each get
// every message, promptly. Face rows are published straight on the session's live subject
// (as the face actor would) rather than analysed from a real stream, so the figure is the
// gateway's alone. Starts NATS, ClickHouse, an actor host (which answers the ownership check),
// and a WebSocket server process built like the gateway's, with the per-user limits (connections,
// subscriptions, pushed bytes) raised so that one user can hold every client; stops them all.
// Usage: node --import tsx ops/bench/ws-fanout.ts [clients=500] [seconds=20]
import { createServer } from 'node:http';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect } from '@nats-io/transport-node';
import { connectBus, createLog, EMOTION_KEYS, type FaceSecond, readConfig, subjects, tenantOf } from '../../bus/index.ts';
import { WsClient } from '../support/ws-client.ts';
import { startServiceStack } from '../support/service-stack.ts';
import { freePort, portOpen, startService, waitUntil } from '../stack/index.ts';
import { percentile } from './lib/stats.ts';

const config = readConfig();

if (process.argv[2] === 'serve') await serve(Number(process.argv[3]), process.argv[4] ?? '', Number(process.argv[5]));
else await bench(Number(process.argv[2] ?? 500), Number(process.argv[3] ?? 20));

/** The WebSocket server process: the gateway's attachWebSocket on a plain HTTP server. */
async function serve(port: number, tokensFile: string, connectionsPerUser: number): Promise<void> {
  const log = createLog(config);
  const { Authenticator, attachWebSocket, busSender, ClientAddresses, RateLimit } = await import('../../gateway/index.ts');
  const nc = await connectBus('ws-fanout bench server', config.natsUrl, log);
  const server = createServer((_, response) => response.writeHead(404).end());
  attachWebSocket(server, {
    nc,
    authenticator: new Authenticator({ tokensFile }),
    send: busSender(nc, config.requestTimeoutMs),
    log: log.child({ component: 'ws' }),
    authFailures: new RateLimit(60, 60),
    limits: { connectionsPerUser, subscriptionsPerConnection: 50, subscriptionsPerUser: connectionsPerUser, pushBytesPerSecondPerUser: 1024 ** 3, unauthenticatedPerAddress: connectionsPerUser, messagesPerMinute: 600, idleMs: 65_000, authTimeoutMs: 30_000, upgradesPerAddressPerMinute: 1_000_000 },
    requests: new RateLimit(1_000_000, 10),
    addresses: new ClientAddresses([]),
  });
  server.listen(port, '127.0.0.1');
  process.once('SIGTERM', () => process.exit(0));
}

async function bench(clientCount: number, seconds: number): Promise<void> {
  const dir = join(config.varDir, 'bench', `ws-fanout-${process.pid}`);
  const stack = await startServiceStack({ name: 'bench-ws-fanout', dir, database: 'emotions_bench', env: { STREAM_UNREACHABLE_SECONDS: '3600' } });
  const started: { stop(): Promise<void> }[] = [stack];
  const clients: WsClient[] = [];
  try {
    const { services, env } = stack;
    const created = await services.api('POST', '/v1/sessions', { body: { name: 'fan-out bench', streamUri: 'rtmp://127.0.0.1:9/live/bench' } });
    const session = created.body._id as string;

    const { alice } = services.users;
    const tokensFile = join(dir, 'ws-tokens.json');
    writeFileSync(tokensFile, JSON.stringify([alice]));
    const port = await freePort();
    const server = startService('ws-server', process.execPath, ['--import', 'tsx', import.meta.filename, 'serve', String(port), tokensFile, String(clientCount)], {
      logFile: join(dir, 'ws-server.log'),
      env: { ...process.env, ...env, LOG_LEVEL: 'warn' },
      cwd: config.projectRoot,
    });
    started.unshift(server);
    await waitUntil('ws server', () => portOpen(port), 30_000);

    const latencies: number[] = [];
    const received = new Map<WsClient, Set<number>>();
    const url = `ws://127.0.0.1:${port}/ws/v1`;
    for (let i = 0; i < clientCount; i += 50) {
      const batch = await Promise.all(Array.from({ length: Math.min(50, clientCount - i) }, () => WsClient.connect(url, alice.token)));
      for (const client of batch) {
        const seen = new Set<number>();
        received.set(client, seen);
        client.onEvent = ([, ts], at) => {
          seen.add(ts);
          latencies.push(at - ts);
        };
        await client.subscribe('session_emotions_counts', `${session}:1s`);
      }
      clients.push(...batch);
    }

    // Four face rows a second, as a four-frame second of one face would give.
    const nc = await connect({ servers: env.NATS_URL });
    const cpuBefore = processCpuSeconds(server.pid);
    const begin = Date.now();
    for (let second = 0; Date.now() - begin < seconds * 1000; second++) {
      for (let track = 0; track < 4; track++) {
        const probabilities = EMOTION_KEYS.map((key) => (key === 'exaltation' ? 0.85 : 0.025));
        const row: FaceSecond = { session, second, track, probabilities, dominant: 'exaltation', frames: 4 };
        nc.publish(subjects.row(session, tenantOf(alice), 'face'), JSON.stringify([row]));
        await sleep(250);
      }
    }
    await sleep(2500);
    const cpuSeconds = processCpuSeconds(server.pid) - cpuBefore;
    const wallSeconds = (Date.now() - begin) / 1000;
    await nc.close();

    const emitted = new Set<number>();
    for (const seen of received.values()) for (const ts of seen) emitted.add(ts);
    const counts = [...received.values()].map((seen) => seen.size);
    console.log(`ws fan-out bench: ${clientCount} clients on session_emotions_counts at 1s, ${seconds} s of face rows`);
    console.table([{
      'messages sent': emitted.size,
      'per client (min/max)': `${Math.min(...counts)}/${Math.max(...counts)}`,
      'clients missing any': counts.filter((count) => count < emitted.size).length,
      deliveries: latencies.length,
      'p50 ms': percentile(latencies, 50).toFixed(1),
      'p99 ms': percentile(latencies, 99).toFixed(1),
      'max ms': Math.max(...latencies).toFixed(1),
      'server CPU %': ((cpuSeconds / wallSeconds) * 100).toFixed(1),
    }]);
  } finally {
    for (const client of clients) client.close();
    for (const service of started) await service.stop().catch((error: unknown) => console.error(error));
    stack.removeFiles();
  }
  await sleep(10);
  process.exit(0);
}

/** User + system CPU seconds of a process so far, from /proc. */
function processCpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

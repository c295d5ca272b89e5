// Throughput and latency of the REST gateway on this machine: GET one session (with a token of
// the tokens file, and with a JWT) and GET the session list, each through the whole path
// (gateway, bus, actor host, KV or ClickHouse), against a bare Koa route as the ceiling, and
// the CPU each process spent per request. Starts NATS, ClickHouse, one actor host and the
// gateway, and stops all of them.
// Usage: node --import tsx ops/bench/api.ts [seconds] [connections] [--profile]
// With --profile the gateway and the actor host write CPU profiles, summarised at the end.
import { SignJWT } from 'jose';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { readConfig } from '../../bus/index.ts';
import { startServiceStack } from '../support/service-stack.ts';
import type { Services } from '../support/services.ts';
import { freePort, type Service, startService, waitUntil } from '../stack/index.ts';

const config = readConfig();

interface Histogram {
  average: number;
  p50: number;
  p99: number;
}
interface AutocannonResult {
  requests: Histogram & { total: number };
  latency: Histogram;
  non2xx: number;
  errors: number;
  timeouts: number;
}
type Autocannon = (options: {
  url: string;
  connections: number;
  duration: number;
  headers?: Record<string, string>;
}) => Promise<AutocannonResult>;

const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

const args = process.argv.slice(2);
const profile = args.includes('--profile');
const [seconds = 20, connections = 100] = args.filter((a) => !a.startsWith('--')).map(Number);
const WARM_UP_SECONDS = 3;
const JWT_SECRET = 'bench-api-secret';
// A closed local port: nothing to analyse.
const STREAM = 'rtmp://127.0.0.1:9/live/bench';

const dir = join(config.varDir, 'bench', `api-${process.pid}`);
const profilesDir = join(dir, 'profiles');

/** CPU seconds (user and system) a process has used so far, from /proc. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  // utime and stime, fields 14 and 15 of stat, in ticks of 1/100 s.
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * Requests per second and latency of one target, and the CPU each service process spent per
 * request during the measured run: unlike the rate, it holds when others load the machine.
 */
async function measure(name: string, url: string, headers: Record<string, string> = {}, processes: Record<string, number> = {}) {
  const before = Object.entries(processes).map(([, pid]) => cpuSeconds(pid));
  const result = await autocannon({ url, connections, duration: seconds, headers });
  const cpuPerRequest = Object.fromEntries(Object.entries(processes).map(([kind, pid], i) =>
    [`${kind} us/req`, Math.round(((cpuSeconds(pid) - before[i]!) * 1e6) / result.requests.total)]));
  const failures = result.non2xx + result.errors + result.timeouts;
  if (failures) console.warn(`${name}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`);
  return { name, rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, total: result.requests.total, failures, cpuPerRequest };
}

/**
 * A first page of ten sessions for the list to return. All are stopped at once: reading a
 * finished session costs the same as an active one, and no worker runs beside the benchmark.
 */
async function seedSessions(services: Services): Promise<string> {
  let last = '';
  for (let i = 0; i < 10; i++) {
    const reply = await services.api('POST', '/v1/sessions', { body: { name: `bench ${i}`, streamUri: STREAM } });
    if (reply.status !== 201) throw new Error(`create answered ${reply.status}: ${JSON.stringify(reply.body)}`);
    last = reply.body._id;
    await services.api('POST', `/v1/sessions/${last}/stop`);
  }
  return last;
}

async function startBareKoa(document: unknown): Promise<{ url: string; service: Service }> {
  const port = await freePort();
  const service = startService('bare-koa', process.execPath, ['--import', 'tsx', join(config.projectRoot, 'ops/bench/bare-koa.ts'), String(port), JSON.stringify(document)], {
    logFile: join(dir, 'bare-koa.log'),
    cwd: config.projectRoot,
  });
  const url = `http://127.0.0.1:${port}/`;
  await waitUntil('bare koa', async () => (await fetch(url)).ok, 30_000);
  return { url, service };
}

const stack = await startServiceStack({
  name: 'bench-api',
  dir,
  database: 'emotions_bench',
  env: {
    STREAM_UNREACHABLE_SECONDS: '3600',
    AUTH_JWT_SECRET: JWT_SECRET,
    ...(profile ? { NODE_OPTIONS: `--import=${profilerPreload(profilesDir)}` } : {}),
  },
});
const started: { stop(): Promise<void> }[] = [stack];
try {
  const { services } = stack;
  const id = await seedSessions(services);
  const session = (await services.api('GET', `/v1/sessions/${id}`)).body;
  const bare = await startBareKoa(session);
  started.unshift(bare.service);

  const auth = { Authorization: `Bearer ${services.users.alice.token}` };
  const { user, product } = services.users.alice;
  const jwt = await new SignJWT({ product }).setProtectedHeader({ alg: 'HS256' }).setSubject(user).setExpirationTime('1d')
    .sign(new TextEncoder().encode(JWT_SECRET));
  console.log(`${connections} connections, ${seconds} s each (after a ${WARM_UP_SECONDS} s warm-up of each)`);
  const processes = { gateway: services.gateway.pid, host: services.hosts[0]!.pid, storage: services.storage.pid };
  const targets: [string, string, Record<string, string>, Record<string, number>][] = [
    ['GET /v1/sessions/:id', `${services.baseUrl}/v1/sessions/${id}`, auth, processes],
    ['GET /v1/sessions/:id, JWT', `${services.baseUrl}/v1/sessions/${id}`, { Authorization: `Bearer ${jwt}` }, processes],
    ['GET /v1/sessions', `${services.baseUrl}/v1/sessions`, auth, processes],
    ['bare Koa route', bare.url, {}, { 'bare Koa': bare.service.pid }],
  ];
  // Every target warmed up before any is measured: the first one measured otherwise paid for
  // the services' start (compiling, the host finishing the sessions just stopped).
  for (const [, url, headers] of targets) await autocannon({ url, connections: 10, duration: WARM_UP_SECONDS, headers });
  const results = [];
  for (const target of targets) results.push(await measure(...target));
  const ceiling = results.at(-1)!.rps;
  console.table(results.map((r) => ({
    target: r.name,
    'req/s': Math.round(r.rps),
    'p50 ms': r.p50,
    'p99 ms': r.p99,
    'of bare Koa': `${((r.rps / ceiling) * 100).toFixed(0)} %`,
    requests: r.total,
    failures: r.failures,
    ...r.cpuPerRequest,
  })));
} finally {
  for (const service of started) await service.stop().catch((error: unknown) => console.error(error));
}
if (profile) {
  summariseProfiles();
  console.log(`\nprofiles (open in Chrome DevTools): ${profilesDir}`);
} else {
  // The servers' data and the services' logs are kept only for a profile.
  stack.removeFiles();
}
// Requests the bench itself made may keep sockets open; everything it started is stopped.
await sleep(10);
process.exit(0);

/**
 * Node refuses --cpu-prof in NODE_OPTIONS, but not --import: this module, given as a data URL,
 * profiles the process from its start and writes the profile when it exits. A same-thread
 * inspector session answers synchronously, so the write completes inside the exit handler.
 */
function profilerPreload(outDir: string): string {
  const code = `
    import { Session } from 'node:inspector';
    import { mkdirSync, writeFileSync } from 'node:fs';
    const session = new Session();
    session.connect();
    session.post('Profiler.enable');
    session.post('Profiler.start');
    process.once('exit', () => session.post('Profiler.stop', (error, result) => {
      if (error) return;
      mkdirSync(${JSON.stringify(outDir)}, { recursive: true });
      writeFileSync(${JSON.stringify(outDir)} + '/' + process.pid + '.cpuprofile', JSON.stringify(result.profile));
    }));`;
  return `data:text/javascript,${encodeURIComponent(code)}`;
}

interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  samples: number[];
  timeDeltas: number[];
}

/** The functions with the most self time in each process's profile, as a share of its samples. */
function summariseProfiles(): void {
  for (const file of readdirSync(profilesDir).filter((f) => f.endsWith('.cpuprofile'))) {
    const { nodes, samples, timeDeltas }: CpuProfile = JSON.parse(readFileSync(join(profilesDir, file), 'utf8'));
    const frames = new Map(nodes.map((n) => [n.id, n.callFrame]));
    const selfMs = new Map<string, number>();
    let totalMs = 0;
    samples.forEach((id, i) => {
      const frame = frames.get(id);
      const ms = (timeDeltas[i] ?? 0) / 1000;
      totalMs += ms;
      if (!frame) return;
      const where = frame.url ? `${frame.url.replace(`file://${config.projectRoot}/`, '')}:${frame.lineNumber + 1}` : '';
      const key = `${frame.functionName || '(anonymous)'} ${where}`.trim();
      selfMs.set(key, (selfMs.get(key) ?? 0) + ms);
    });
    const top = [...selfMs].sort((a, b) => b[1] - a[1]).slice(0, 15);
    console.log(`\n${file}: ${(totalMs / 1000).toFixed(1)} s sampled`);
    for (const [name, ms] of top) console.log(`  ${((ms / totalMs) * 100).toFixed(1).padStart(5)} %  ${name}`);
  }
}

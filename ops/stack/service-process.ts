// The one way ops start a process of the service (a storage service, an actor host or a
// gateway): `npm start`, `npm run cluster`, the tests and the benchmarks all come here. A process
// counts as up when its /readyz (bus/metrics-server.ts, on its METRICS_PORT) answers 200: each
// process says so itself, once it serves, the gateway included. A process kept running is
// restarted by the actors' Supervisor, the project's one restart policy. Each process connects
// to NATS as the user of its kind (bus/permissions.ts): a NATS_URL without credentials gets
// that user's password on the local servers (bus-credentials.ts).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Supervisor, type Child, type SupervisorOptions } from '../../actors/supervisor.ts';
import { BUNDLE_EXEC_ARGV, bundled } from '../../bus/typescript-bundle.ts';
import { localPasswords, withCredential } from './bus-credentials.ts';
import { httpRequest } from './http-client.ts';
import { startService, type Service } from './process.ts';

export type Role = 'storage' | 'host' | 'gateway';

const MAIN: Record<Role, string> = { storage: 'storage/main.ts', host: 'actors/main.ts', gateway: 'gateway/main.ts' };

// Models to load, a schema to migrate: minutes on a loaded machine the first time.
const READY_MS = 120_000;
/** A test file starts three processes or more, each ready within a second or two: asked often. */
const READY_POLL_MS = 50;

// A process's restart is costlier than a stream worker's (models to load, sessions to take
// over): a longer backoff, and a crash loop judged over minutes. Stopped, it has 5 s to hand
// its sessions over before SIGKILL.
const PROCESS_SUPERVISION: SupervisorOptions = { intensity: 5, periodMs: 300_000, backoffMs: 1000, maxBackoffMs: 30_000, shutdownMs: 5000 };

export interface ServiceSpec {
  /** Its HOST_ID: in its logs and, for a host, the owner named in session records. */
  id: string;
  role: Role;
  projectRoot: string;
  logFile: string;
  env: NodeJS.ProcessEnv;
  /** Where its /metrics, /livez and /readyz answer: 127.0.0.1 unless said. */
  metricsHost?: string;
  metricsPort: number;
}

/** Node's arguments that run a process of `role`: its bundle, as every start of it runs. */
export async function serviceArgs(projectRoot: string, role: Role): Promise<string[]> {
  return [...BUNDLE_EXEC_ARGV, await bundled(join(projectRoot, MAIN[role]))];
}

/** Starts the process and resolves once its /readyz says it serves; fails, with where its log is, if it exits first or never does. */
export async function launchService(spec: ServiceSpec): Promise<Service> {
  const metrics = metricsUrl(spec);
  const nats = spec.env.NATS_URL === undefined ? {} : { NATS_URL: withCredential(spec.env.NATS_URL, spec.role, localPasswords()[spec.role]) };
  const service = startService(spec.id, process.execPath, await serviceArgs(spec.projectRoot, spec.role), {
    logFile: spec.logFile,
    env: { ...spec.env, ...nats, HOST_ID: spec.id, METRICS_HOST: spec.metricsHost ?? '127.0.0.1', METRICS_PORT: String(spec.metricsPort) },
    cwd: spec.projectRoot,
  });
  let exit: unknown;
  void service.exited.then((code) => (exit = code ?? 'did not start'));
  const deadline = Date.now() + READY_MS;
  for (;;) {
    if (await ready(metrics)) return service;
    const reason = exit !== undefined ? `exited (${exit}) before it was ready` : Date.now() > deadline ? `was not ready within ${READY_MS / 1000} s` : undefined;
    if (reason) {
      await service.stop();
      throw new Error(`${spec.id} ${reason}; see ${spec.logFile}, which ends:\n${logTail(spec.logFile)}`);
    }
    await sleep(READY_POLL_MS);
  }
}

// Where the run happened may be gone by the time someone reads why it failed: the error carries
// the log's last lines, without stack frames, which would crowd out the reason.
function logTail(file: string, lines = 6): string {
  try {
    const text = readFileSync(file, 'utf8').split('\n').filter((line) => line.trim() !== '' && !/^\s+at /.test(line));
    return text.slice(-lines).map((line) => `  ${line.slice(0, 500)}`).join('\n');
  } catch {
    return '  (no log)';
  }
}

function metricsUrl(spec: ServiceSpec): string {
  return `http://${spec.metricsHost ?? '127.0.0.1'}:${spec.metricsPort}`;
}

async function ready(metrics: string): Promise<boolean> {
  try {
    return (await httpRequest(`${metrics}/readyz`)).status === 200;
  } catch {
    return false;
  }
}

/** A process that can be started, lost like a machine, started again, or kept running. */
export interface ServiceProcess {
  id: string;
  role: Role;
  /** Its /metrics, /livez and /readyz. */
  metricsUrl: string;
  /** Where its output goes, every run of it appended. */
  logFile: string;
  /** The running process, if any. */
  current(): Service | undefined;
  /** Starts it; resolves once it is ready. */
  start(): Promise<void>;
  /** From now on, whenever it crashes it is started again; `report` hears each restart and the giving up. */
  keepRunning(report: (message: string) => void): void;
  /** SIGKILL: nothing flushed, no session handed over; not restarted. */
  kill(): Promise<void>;
  stop(): Promise<void>;
}

export function serviceProcess(spec: ServiceSpec): ServiceProcess {
  let service: Service | undefined;
  let supervisor: Supervisor | undefined;

  // A crash is any end the process did not ask for: a stop from outside (exit 0) is respected.
  const asChild = (launching: Promise<Service>): Child => ({
    done: launching.then(async (started) => {
      service = started;
      const code = await started.exited;
      if (code !== 0) throw new Error(`${spec.id} exited (${code})`);
    }),
    stop: async (graceMs) => (await launching.catch(() => undefined))?.stop(graceMs),
  });

  const stop = async () => {
    const running = supervisor;
    supervisor = undefined;
    await running?.stop();
    await service?.stop();
    service = undefined;
  };

  return {
    id: spec.id,
    role: spec.role,
    metricsUrl: metricsUrl(spec),
    logFile: spec.logFile,
    current: () => service,
    async start() {
      service = await launchService(spec);
    },
    keepRunning(report) {
      let first = service;
      supervisor = new Supervisor(() => {
        const child = asChild(first ? Promise.resolve(first) : launchService(spec));
        first = undefined;
        return child;
      }, {
        ...PROCESS_SUPERVISION,
        onRestart: (error, restarts) => report(`${(error as Error).message}; starting it again (restart ${restarts})`),
      });
      supervisor.done.catch((error: Error) => report(`${error.message}; it crashed too often and stays down`));
    },
    async kill() {
      if (service) process.kill(-service.pid, 'SIGKILL');
      await stop();
    },
    stop,
  };
}

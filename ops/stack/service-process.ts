// One process of the service (a storage service, an actor host or a gateway) run from its
// main.ts, which can be killed like a lost machine and started again. It counts as up when it
// says so: storage services and hosts answer their health subject on the bus, a gateway
// answers HTTP.
import { join } from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { waitForHealth } from '../../bus/health.ts';
import { startService, waitUntil, type Service } from './process.ts';

export type Role = 'storage' | 'host' | 'gateway';

const MAIN: Record<Role, string> = { storage: 'storage/main.ts', host: 'actors/main.ts', gateway: 'gateway/main.ts' };

export interface ServiceProcessSpec {
  /** Its HOST_ID: the health subject, the owner named in session records. */
  id: string;
  role: Role;
  projectRoot: string;
  logFile: string;
  env: NodeJS.ProcessEnv;
  /** Where a gateway answers (its PORT); unused for the other roles. */
  baseUrl?: string;
  bus: NatsConnection;
}

export interface ServiceProcess {
  id: string;
  role: Role;
  /** The running process, if any. */
  current(): Service | undefined;
  start(): Promise<void>;
  /** SIGKILL: nothing flushed, no session handed over. */
  kill(): Promise<void>;
  stop(): Promise<void>;
}

const READY_MS = 120_000;

export function serviceProcess(spec: ServiceProcessSpec): ServiceProcess {
  let service: Service | undefined;
  const stop = async () => {
    await service?.stop();
    service = undefined;
  };
  const ready = (started: Service) =>
    spec.role === 'gateway'
      ? waitUntil(spec.id, async () => (await fetch(`${spec.baseUrl}/v1/sessions`)).status === 401, READY_MS)
      : waitForHealth(spec.bus, spec.id, READY_MS, started.exited).then(() => undefined);
  return {
    id: spec.id,
    role: spec.role,
    current: () => service,
    stop,
    async start() {
      const started = startService(spec.id, process.execPath, ['--import', 'tsx', join(spec.projectRoot, MAIN[spec.role])], {
        logFile: spec.logFile,
        env: { ...spec.env, HOST_ID: spec.id },
        cwd: spec.projectRoot,
      });
      service = started;
      await ready(started).catch((error: Error) => {
        throw new Error(`${error.message}; see ${spec.logFile}`);
      });
    },
    async kill() {
      if (!service) return;
      process.kill(service.pid, 'SIGKILL');
      await stop();
    },
  };
}

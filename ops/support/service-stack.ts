// NATS and ClickHouse on free loopback ports and the service started against them, as real
// processes: what a benchmark or a fuzz campaign runs against.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { startClickHouse } from '../stack/clickhouse.ts';
import { startNats } from '../stack/nats.ts';
import { freePort } from '../stack/ports.ts';
import { startServices, type Services } from './services.ts';

export interface ServiceStackOptions {
  /** Names the services' log folder (`var/test/services/<name>-<pid>`). */
  name: string;
  /** The servers' data. */
  dir: string;
  database: string;
  /** On top of the servers' addresses and the database. */
  env?: Record<string, string>;
}

export interface ServiceStack {
  services: Services;
  clickhouseUrl: string;
  /** What the services were started with: the servers' addresses, the database and `env`. */
  env: Record<string, string>;
  /** Stops the services, then the servers; reports what fails to stop and goes on. */
  stop(): Promise<void>;
  /** Once stopped: the servers' data and the services' logs, unless they are to be read. */
  removeFiles(): void;
}

export async function startServiceStack(options: ServiceStackOptions): Promise<ServiceStack> {
  const started: { stop(): Promise<void> }[] = [];
  const stop = async () => {
    for (const service of started) await service.stop().catch((error: unknown) => console.error(error));
  };
  try {
    const nats = await startNats({ dir: join(options.dir, 'nats'), port: await freePort() });
    started.unshift(nats);
    const clickhouse = await startClickHouse({ dir: join(options.dir, 'clickhouse'), httpPort: await freePort(), tcpPort: await freePort() });
    started.unshift(clickhouse);
    const env = { NATS_URL: nats.url, CLICKHOUSE_URL: clickhouse.url, CLICKHOUSE_DATABASE: options.database, ...options.env };
    const services = await startServices({ name: options.name, env });
    started.unshift(services);
    const removeFiles = () => {
      for (const path of [options.dir, services.logDir]) rmSync(path, { recursive: true, force: true });
    };
    return { services, clickhouseUrl: clickhouse.url, env, stop, removeFiles };
  } catch (error) {
    await stop();
    throw error;
  }
}

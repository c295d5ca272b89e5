// The servers a benchmark needs, on free loopback ports, with their data in a folder of their
// own under var/bench that is removed when they stop.
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { readConfig } from '../../../bus/index.ts';
import { migrate } from '../../../storage/index.ts';
import { freePort, type Service, startClickHouse, startNats } from '../../stack/index.ts';

const config = readConfig();

export const BENCH_DATABASE = 'emotions_bench';

export interface BenchStack {
  dir: string;
  clickhouse: ClickHouseClient;
  nats?: { nc: NatsConnection; js: JetStreamClient; jsm: JetStreamManager };
  stop(): Promise<void>;
}

/** ClickHouse with the schema migrated, and NATS with JetStream when asked for. */
export async function startBenchStack(name: string, withNats: boolean): Promise<BenchStack> {
  const dir = join(config.varDir, 'bench', `${name}-${process.pid}`);
  const services: Service[] = [];
  const closers: (() => Promise<unknown>)[] = [];
  const stop = async () => {
    for (const close of closers.reverse()) await close().catch(() => {});
    await Promise.all(services.map((service) => service.stop()));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const server = await startClickHouse({ dir: join(dir, 'clickhouse'), httpPort: await freePort(), tcpPort: await freePort() });
    services.push(server);
    const clickhouse = createClient({
      url: server.url,
      database: BENCH_DATABASE,
      compression: { request: false, response: false },
      request_timeout: 60_000,
      clickhouse_settings: { output_format_json_quote_64bit_integers: 0 },
    });
    closers.push(() => clickhouse.close());
    const bootstrap = createClient({ url: server.url, compression: { request: false, response: false } });
    await migrate(bootstrap, BENCH_DATABASE).finally(() => bootstrap.close());
    let nats: BenchStack['nats'];
    if (withNats) {
      const natsServer = await startNats({ dir: join(dir, 'nats'), port: await freePort(), maxMemoryStore: '256MB', maxFileStore: '4GB' });
      services.push(natsServer);
      const nc = await connect({ servers: natsServer.url, name: `bench-${name}` });
      closers.push(() => nc.drain());
      nats = { nc, js: jetstream(nc), jsm: await jetstreamManager(nc) };
    }
    return { dir, clickhouse, nats, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

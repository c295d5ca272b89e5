// A local NATS server with JetStream, its store under the given folder, listening on loopback.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { portOpen } from './ports.ts';
import { startService, waitUntil, type Service } from './process.ts';

export interface NatsOptions {
  dir: string;
  port: number;
  maxMemoryStore?: string;
  maxFileStore?: string;
}

export async function startNats(options: NatsOptions): Promise<Service & { url: string }> {
  mkdirSync(join(options.dir, 'jetstream'), { recursive: true });
  const configFile = join(options.dir, 'nats.conf');
  writeFileSync(
    configFile,
    [
      `listen: 127.0.0.1:${options.port}`,
      `server_name: local`,
      `max_payload: 8MB`,
      'jetstream {',
      `  store_dir: "${join(options.dir, 'jetstream')}"`,
      `  max_memory_store: ${options.maxMemoryStore ?? '256MB'}`,
      `  max_file_store: ${options.maxFileStore ?? '4GB'}`,
      '}',
      '',
    ].join('\n'),
  );
  const service = startService('nats', 'nats-server', ['-c', configFile], { logFile: join(options.dir, 'nats.log') });
  await waitUntil('nats-server', () => portOpen(options.port), 15_000);
  return { ...service, url: `nats://127.0.0.1:${options.port}` };
}

// Streams are made by whichever storage service starts first; the others find them there. One
// made earlier with fewer replicas than configured (a single server grown into a cluster) is
// raised to the configured count.
import type { JetStreamManager, StreamConfig, StreamInfo } from '@nats-io/jetstream';

/** The stream as it stands, created from `config` when missing (a concurrent create by another service included). */
export async function ensureStream(
  jsm: JetStreamManager,
  config: Partial<StreamConfig> & { name: string; num_replicas: number },
): Promise<StreamInfo> {
  const existing = await jsm.streams.info(config.name).catch(() => undefined);
  if (existing) {
    if (existing.config.num_replicas >= config.num_replicas) return existing;
    return jsm.streams.update(config.name, { ...existing.config, num_replicas: config.num_replicas });
  }
  return jsm.streams.add(config).catch((error: unknown) =>
    jsm.streams.info(config.name).catch(() => {
      throw error;
    }),
  );
}

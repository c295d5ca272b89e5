// Streams are made by whichever storage service starts first; the others find them there.
import type { JetStreamManager, StreamConfig, StreamInfo } from '@nats-io/jetstream';

/** The stream as it stands, created from `config` when missing (a concurrent create by another service included). */
export async function ensureStream(jsm: JetStreamManager, config: Partial<StreamConfig> & { name: string }): Promise<StreamInfo> {
  const existing = await jsm.streams.info(config.name).catch(() => undefined);
  if (existing) return existing;
  return jsm.streams.add(config).catch((error: unknown) =>
    jsm.streams.info(config.name).catch(() => {
      throw error;
    }),
  );
}

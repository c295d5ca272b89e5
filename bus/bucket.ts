// The KV buckets where the truth about sessions lives: created by whichever process opens one
// first, with as many replicas as the NATS cluster is configured to keep (NATS_REPLICAS), so a
// bucket outlives the loss of a server. A bucket made earlier with fewer replicas is raised.
import { StorageType, type JetStreamClient } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';

export interface BucketOptions {
  replicas: number;
  /** How long an entry is kept; for ever when absent. */
  ttlMs?: number;
}

export async function openBucket(js: JetStreamClient, name: string, options: BucketOptions): Promise<KV> {
  const kv = await new Kvm(js).create(name, { history: 1, storage: StorageType.File, replicas: options.replicas, ttl: options.ttlMs });
  const status = await kv.status();
  if (status.replicas < options.replicas) {
    const jsm = await js.jetstreamManager();
    const stream = await jsm.streams.info(status.streamInfo.config.name);
    await jsm.streams.update(stream.config.name, { ...stream.config, num_replicas: options.replicas });
  }
  return kv;
}

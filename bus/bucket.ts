// The KV buckets where the truth about sessions lives: created by whichever process opens one
// first, with as many replicas as the NATS cluster is configured to keep (NATS_REPLICAS), so a
// bucket outlives the loss of a server. A bucket made earlier with fewer replicas is raised, and
// one made earlier without the age or size it is now opened with is given them.
import { setTimeout as sleep } from 'node:timers/promises';
import { StorageType, type JetStreamClient } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import { isTransient } from './errors.ts';

export interface BucketOptions {
  replicas: number;
  /** How long an entry is kept after its last write (the stream's max_age); for ever when absent. */
  ttlMs?: number;
  /** How many bytes the bucket may hold; a write past it is refused. Unbounded when absent. */
  maxBytes?: number;
  /**
   * How long to keep asking while JetStream does not answer. A process opens its buckets as it
   * starts, often together with the servers: a cluster still electing the leader of a bucket's
   * stream answers nothing for a few seconds, and a starting process should wait that out
   * rather than exit. Errors that are not about reaching JetStream fail at once.
   */
  patienceMs?: number;
}

const PATIENCE_MS = 60_000;
const FIRST_PAUSE_MS = 250;
const LONGEST_PAUSE_MS = 4000;

export async function openBucket(js: JetStreamClient, name: string, options: BucketOptions): Promise<KV> {
  const giveUpAt = Date.now() + (options.patienceMs ?? PATIENCE_MS);
  for (let pause = FIRST_PAUSE_MS; ; pause = Math.min(2 * pause, LONGEST_PAUSE_MS)) {
    try {
      return await createOrRaise(js, name, options);
    } catch (error) {
      if (!isTransient(error) || Date.now() + pause >= giveUpAt) throw error;
      await sleep(pause);
    }
  }
}

/**
 * Creates the bucket or binds to it (both are safe to repeat), then raises its replicas if needed.
 * Reads go to the leader of the bucket's stream, not to any replica (`allow_direct`): a replica
 * can answer before it has stored a write the leader acknowledged, and a host that read its own
 * new session as missing there took it for gone and left it unanalysed.
 */
async function createOrRaise(js: JetStreamClient, name: string, options: BucketOptions): Promise<KV> {
  const kv = await new Kvm(js).create(name, {
    history: 1,
    storage: StorageType.File,
    replicas: options.replicas,
    ttl: options.ttlMs,
    max_bytes: options.maxBytes,
    allow_direct: false,
  });
  const { config } = (await kv.status()).streamInfo;
  const maxAge = options.ttlMs === undefined ? config.max_age : options.ttlMs * 1_000_000;
  const maxBytes = options.maxBytes ?? config.max_bytes;
  if (config.num_replicas < options.replicas || config.max_age !== maxAge || config.max_bytes !== maxBytes) {
    const jsm = await js.jetstreamManager();
    const { config: latest } = await jsm.streams.info(config.name);
    await jsm.streams.update(latest.name, { ...latest, num_replicas: Math.max(latest.num_replicas, options.replicas), max_age: maxAge, max_bytes: maxBytes });
  }
  return kv;
}

// Which worker runs which test file. Files that analyse live media for long are CPU-heavy and
// judge what the analysis kept up with: they run one at a time, on one worker, beside files that
// mostly wait on servers. Each worker takes from its own queues in order, longest files first,
// so that the slowest start early and the short ones fill the gaps at the end.

/** Analysis of live media, minutes of it: never two at once. */
const MEDIA_HEAVY = [
  'integration/face-emotions.test.ts',
  'integration/voice-features.test.ts',
  'integration/transcript-sentiment.test.ts',
  'integration/face-effort.test.ts',
  'integration/dashboard.test.ts',
  'integration/demo-first-run.test.ts',
];

/**
 * The files apart from the media-heavy ones that take 40 s or more, longest first (measured in a
 * run on two cores, 2026-11-30): started first, the longest file of each lane early, so that the
 * short ones fill the gaps at the end. The costliest of them in CPU (face-effort-per-stream,
 * host-fairness) start beside the waiting ones, while the machine has cores to spare. A file
 * missing here is only started later; nothing else depends on this list.
 */
const LONG = [
  'cluster/zookeeper-loss.test.ts',
  'cluster/shard-loss.test.ts',
  'cluster/clickhouse-cluster.test.ts',
  'cluster/node-loss.test.ts',
  'cluster/kv-leader-loss.test.ts',
  'cluster/clickhouse-production-config.test.ts',
  'integration/session-cost-stop.test.ts',
  'integration/host-fairness.test.ts',
  'integration/face-effort-per-stream.test.ts',
  'integration/ingest-streams.test.ts',
  'integration/fuzz-rest.test.ts',
  'integration/stalled-host.test.ts',
  'integration/voice-clickhouse-outage.test.ts',
  'integration/nats-restart.test.ts',
  'integration/stream-pacing.test.ts',
  'integration/rate-limits-fairness.test.ts',
  'integration/fuzz-ws.test.ts',
  'integration/openapi.test.ts',
  'integration/malicious-peers.test.ts',
  'integration/emogg-compat.test.ts',
  'integration/sessions-streams.test.ts',
];

export type Queue = 'media' | 'servers' | 'unit';

export function queueOf(file: string): Queue {
  if (MEDIA_HEAVY.includes(file)) return 'media';
  return file.startsWith('unit/') ? 'unit' : 'servers';
}

/** Files in the order they should start: the known long ones first, then by name. */
export function byExpectedLength(files: string[]): string[] {
  const rank = (file: string) => {
    const index = [...MEDIA_HEAVY, ...LONG].indexOf(file);
    return index < 0 ? Number.MAX_SAFE_INTEGER : index;
  };
  return [...files].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

/** Hands out files to workers that each prefer some queues, in order. */
export class Scheduler {
  private readonly queues = new Map<Queue, string[]>();

  constructor(files: string[]) {
    for (const file of byExpectedLength(files)) {
      const queue = queueOf(file);
      this.queues.set(queue, [...(this.queues.get(queue) ?? []), file]);
    }
  }

  /** Whether a worker with this preference has a file left to take. */
  hasFileFor(preference: readonly Queue[]): boolean {
    return preference.some((queue) => (this.queues.get(queue)?.length ?? 0) > 0);
  }

  next(preference: readonly Queue[]): string | undefined {
    for (const queue of preference) {
      const file = this.queues.get(queue)?.shift();
      if (file) return file;
    }
    return undefined;
  }
}

// How far the session index has followed the sessions bucket. The bucket's latest revision is
// asked after a caller comes (a change the caller made before is at or below it). The index
// holds every change made before a moment once its consumer, asked after that moment, has
// nothing left to deliver and nothing unacknowledged: each change is acknowledged only once
// ClickHouse has it (storage/session-index-follower.ts). The consumer's acknowledgement floor
// would not do: the bucket keeps one revision a key, and a change replaced by a newer one
// before it was stored leaves the floor at once, ahead of the newer one.
import type { JetStreamManager } from '@nats-io/jetstream';
import { setTimeout as sleep } from 'node:timers/promises';
import { buckets, consumers } from '../bus/subjects.ts';
import { AskedAfter } from './asked-after.ts';

export const SESSIONS_STREAM = `KV_${buckets.sessions}`;

const POLL_MS = 50;

export class IndexProgress {
  private readonly head: AskedAfter<number>;
  private readonly current: AskedAfter<boolean>;

  constructor(jsm: JetStreamManager) {
    this.head = new AskedAfter(async () => (await jsm.streams.info(SESSIONS_STREAM)).state.last_seq);
    this.current = new AskedAfter(async () => {
      const info = await jsm.consumers.info(SESSIONS_STREAM, consumers.sessionIndex);
      return info.num_pending === 0 && info.num_ack_pending === 0;
    });
  }

  /** The bucket's latest revision, as asked after this call. */
  latest(): Promise<number> {
    return this.head.latest();
  }

  /**
   * Waits until the index holds every change made before this call: false when `until` (ms
   * since the epoch) comes first.
   */
  async caughtUp(until: number): Promise<boolean> {
    for (;;) {
      if (await this.current.latest().catch(() => false)) return true;
      if (Date.now() + POLL_MS > until) return false;
      await sleep(POLL_MS);
    }
  }
}

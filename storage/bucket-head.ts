// The sessions bucket's latest revision, as asked after a given moment: a list must see every
// change made before it came. One stream-info request serves every list that came before it
// was sent; lists that come while it is on its way wait for the next one, so at most one
// request is on its way and one waits, however many lists there are.
import type { JetStreamManager } from '@nats-io/jetstream';
import { buckets } from '../bus/subjects.ts';

export class BucketHead {
  private asked?: Promise<number>;
  private next?: Promise<number>;

  constructor(private readonly jsm: JetStreamManager) {}

  latest(): Promise<number> {
    if (!this.asked) {
      this.asked = this.jsm.streams.info(`KV_${buckets.sessions}`)
        .then((info) => info.state.last_seq)
        .finally(() => (this.asked = undefined));
      return this.asked;
    }
    // The request on its way may have been sent before this list came.
    this.next ??= this.asked.catch(() => 0).then(() => {
      this.next = undefined;
      return this.latest();
    });
    return this.next;
  }
}

// The sockets listening to one feed, and the handing out of each of its payloads: serialised
// once (delivery.ts), however many subscriptions listen, then offered to each of them.
import type { Logger } from '../../bus/log.ts';
import type { Delivery, EncodeDelivery } from './delivery.ts';
import type { Channel } from './protocol.ts';

export interface FeedListener {
  /** One message, shared with every other listener of the feed: it must not be changed. */
  deliver(delivery: Delivery): void;
}

export class Fanout {
  readonly listeners = new Set<FeedListener>();
  /** Where the next delivery starts among the listeners (see send). */
  private turn = 0;

  constructor(
    private readonly channel: Channel,
    private readonly encode: EncodeDelivery,
    private readonly log: Logger,
  ) {}

  send(payload: object): void {
    if (this.listeners.size === 0) return;
    const delivery = this.encode(Date.now(), this.channel, payload);
    // A user over its push budget gets its frames on the first of its sockets offered them:
    // starting one further each time shares what the budget lets through among its sockets
    // instead of always starving the same ones.
    const listeners = [...this.listeners];
    const start = this.turn++ % listeners.length;
    for (let i = 0; i < listeners.length; i++) {
      try {
        (listeners[(start + i) % listeners.length] as FeedListener).deliver(delivery);
      } catch (error) {
        this.log.warn({ err: error }, 'a listener failed to take a delivery');
      }
    }
  }
}

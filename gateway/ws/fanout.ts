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

  constructor(
    private readonly channel: Channel,
    private readonly encode: EncodeDelivery,
    private readonly log: Logger,
  ) {}

  send(payload: object): void {
    if (this.listeners.size === 0) return;
    const delivery = this.encode(Date.now(), this.channel, payload);
    // A user over its push budget has its messages sent to the first of its subscriptions offered
    // them: starting anywhere shares what the budget lets through among all of them instead of
    // always starving the same ones.
    const listeners = [...this.listeners];
    const start = Math.floor(Math.random() * listeners.length);
    for (let i = 0; i < listeners.length; i++) {
      try {
        (listeners[(start + i) % listeners.length] as FeedListener).deliver(delivery);
      } catch (error) {
        this.log.warn({ err: error }, 'a listener failed to take a delivery');
      }
    }
  }
}

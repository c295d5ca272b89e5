// One pushed message, `[subscriptionId, ts, channel, payload]`, built once for every socket it
// goes to. Only the first element differs between subscriptions, so everything after it is
// encoded once into a Buffer that every socket's frame shares: each socket sends its
// subscription's head, then that same Buffer, as the two fragments of one WebSocket message.
// A string would be encoded again by each socket's write; a shared Buffer is written as it is.
import type { Channel } from './protocol.ts';

export interface Delivery {
  /** `,ts,"channel",payload]`: the message after its subscription id, as UTF-8. */
  readonly tail: Buffer;
}

/** Builds the delivery of one payload; the only place a pushed payload is serialised. */
export type EncodeDelivery = (ts: number, channel: Channel, payload: object) => Delivery;

export const encodeDelivery: EncodeDelivery = (ts, channel, payload) => ({
  tail: Buffer.from(`,${ts},${JSON.stringify(channel)},${JSON.stringify(payload)}]`),
});

/** The start of a subscription's message: `["<subscriptionId>"`. */
export const deliveryHead = (subscriptionId: string): string => `[${JSON.stringify(subscriptionId)}`;

// What a NATS user is refused, as nats.js reports it: a subscription the server closes, a
// request that fails, a publish the connection's status reports (bus/permissions.ts).
import * as assert from 'uvu/assert';
import { setTimeout as sleep } from 'node:timers/promises';
import { PermissionViolationError, type NatsConnection } from '@nats-io/transport-node';

/** `value` after `ms`, on a timer that does not keep the file's process open once its tests are done. */
const notBefore = <T>(ms: number, value: T) => sleep(ms, value, { ref: false });

/** The server closed the subscription: the user may not subscribe there. */
export async function refusedSubscription(nc: NatsConnection, subject: string, queue?: string): Promise<void> {
  const sub = nc.subscribe(subject, { queue });
  const closed = await Promise.race([sub.closed, notBefore(3000, 'open' as const)]);
  if (closed === 'open') sub.unsubscribe();
  assert.instance(closed, PermissionViolationError, `subscribing to ${subject} is refused`);
}

export async function allowedSubscription(nc: NatsConnection, subject: string, queue?: string): Promise<void> {
  const sub = nc.subscribe(subject, { queue });
  await nc.flush();
  const closed = await Promise.race([sub.closed, notBefore(500, 'open' as const)]);
  sub.unsubscribe();
  assert.is(closed, 'open', `subscribing to ${subject} is allowed`);
}

/** The server refused `nc`'s publish (it says so on the connection's status) and `witness`, allowed everything, received nothing. */
export async function refusedDelivery(nc: NatsConnection, witness: NatsConnection, subject: string): Promise<void> {
  const received: string[] = [];
  const watching = witness.subscribe(subject, { callback: (_, msg) => void received.push(msg.subject) });
  await witness.flush();
  const refusal = (async () => {
    for await (const status of nc.status()) {
      if (status.type === 'error' && status.error instanceof PermissionViolationError && status.error.subject === subject) return true;
    }
    return false;
  })();
  nc.publish(subject, '[]');
  const refused = await Promise.race([refusal, notBefore(3000, false)]);
  await witness.flush();
  watching.unsubscribe();
  assert.ok(refused, `publishing to ${subject} is refused`);
  assert.equal(received, [], `nothing was delivered on ${subject}`);
}

/** The request failed for the server's refusal to take it (nats.js gives it as the failure's cause). */
export async function refusedRequest(request: Promise<unknown>, what: string): Promise<void> {
  let error = await request.then(() => undefined, (caught: unknown) => caught);
  while (error instanceof Error && !(error instanceof PermissionViolationError) && error.cause) error = error.cause;
  assert.instance(error, PermissionViolationError, `${what} is refused: ${String(error)}`);
}


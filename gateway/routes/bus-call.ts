// The gateway's only way to get anything done: one bus request per REST call.
import type { NatsConnection } from '@nats-io/transport-node';
import type { Operation, ReplyOf, RequestOf } from '../../bus/operations.ts';
import { call, type RequestObserver } from '../../bus/rpc.ts';
import { TurnBatch } from '../turn-batch.ts';

export type Send = <O extends Operation>(operation: O, request: RequestOf<O>) => Promise<ReplyOf<O>>;

export const busSender = (nc: NatsConnection, timeoutMs: number, observe?: RequestObserver): Send => {
  const batch = new TurnBatch();
  return (operation, request) => batch.run(() => call(nc, operation, request, timeoutMs, observe));
};

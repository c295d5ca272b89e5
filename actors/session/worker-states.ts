// Live subscribers hear of every worker state a host writes, the last one included (the record
// in the KV stays the truth). Heartbeats and changes that touch neither state are not news.
import type { NatsConnection } from '@nats-io/transport-node';
import type { WorkerStateMessage } from '../../bus/contracts/live.ts';
import type { Written } from '../../bus/session-records.ts';
import { subjects, tenantOf } from '../../bus/subjects.ts';

export function announceWorkerStates(nc: NatsConnection): Written {
  return (before, after) => {
    if (before && before.workerState === after.workerState && before.state === after.state) return;
    const { id, state, workerState, stopReason } = after;
    const message: WorkerStateMessage = {
      session: id,
      state: workerState,
      sessionState: state,
      ...(stopReason ? { stopReason } : {}),
      at: Date.now(),
    };
    nc.publish(subjects.workerState(id, tenantOf(after)), JSON.stringify(message));
  };
}

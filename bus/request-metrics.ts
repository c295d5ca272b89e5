// Bus request latency, on both sides: the caller's wait for the reply (what a REST call spends
// on the bus) and the responder's handler time (what the work costs where it is done).
import { Histogram, type Registry } from 'prom-client';
import type { RequestObserver } from './rpc.ts';

export function busRequestMetrics(registry: Registry): RequestObserver {
  const duration = new Histogram({
    name: 'emo_bus_request_duration_seconds',
    help: 'Bus requests (bus/operations.ts) by operation, side (caller: until the reply arrived; responder: the handler) and status answered (200 or the error status)',
    labelNames: ['operation', 'side', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  return (operation, side, seconds, status) => duration.observe({ operation, side, status: String(status) }, seconds);
}

// Totals that components already keep as plain numbers (RowPublisher.refused,
// StorageWriter.rowsWritten, ...), exported as Prometheus counters read at each scrape: the
// component needs no metrics library and its hot path no extra call.
import { Counter, type Registry } from 'prom-client';

export function runningTotal(registry: Registry, name: string, help: string, read: () => number): Counter {
  return new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      // The component's total since start is the counter's value; it only grows.
      this.reset();
      this.inc(read());
    },
  });
}

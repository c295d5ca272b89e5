// Whether the ROWS stream has room for one more message. NATS 2.9 admits a message into a
// `discard: new` stream by its payload size, then finds the stored size (with subject, headers
// and record overhead) over max_bytes and removes the oldest message to make room: silently,
// once per message published at the edge (nats-server#4771, #4775). Publishers therefore stop
// at a high-water mark below the limit, read from the stream's state, and wait there for the
// writer to drain it; the server's own refusal is only the backstop.
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { streams } from '../bus/subjects.ts';

/** The share of max_bytes publishers fill: the rest covers what other hosts publish between two reads of the state. */
const HIGH_WATER = 0.9;
const REFRESH_MS = 1000;
// What the server stores beside a payload: subject, message-id header, record framing.
const OVERHEAD_BYTES = 160;

export class RowsRoom {
  private manager?: Promise<JetStreamManager>;
  private limit = Infinity;
  private bytes = 0;
  private readAt = 0;

  constructor(private readonly js: JetStreamClient) {}

  /** True when a message of `size` bytes fits below the high-water mark; it is then counted as stored. */
  async admits(size: number): Promise<boolean> {
    const stored = size + OVERHEAD_BYTES;
    if (Date.now() - this.readAt > REFRESH_MS || this.bytes + stored > this.limit) await this.read();
    if (this.bytes + stored > this.limit) return false;
    this.bytes += stored;
    return true;
  }

  private async read(): Promise<void> {
    try {
      this.manager ??= this.js.jetstreamManager(false);
      const { config, state } = await (await this.manager).streams.info(streams.rows);
      this.limit = config.max_bytes > 0 ? config.max_bytes * HIGH_WATER : Infinity;
      this.bytes = state.bytes;
      this.readAt = Date.now();
    } catch {
      // NATS unreachable or the stream not made yet: the publish itself fails and is retried.
      this.manager = undefined;
      this.limit = Infinity;
    }
  }
}

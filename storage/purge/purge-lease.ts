// Which storage service runs the next purge round: the one whose compare-and-set on the key
// `round` of the `purges` bucket lands first once a round is due. Every service that writes
// tries; exactly one wins each round, so several services issue no more mutations than one.
// A winner that dies mid-round leaves its sessions queued for the next round.
import type { KV } from '@nats-io/kv';
import { isConflict } from '../../bus/session-records.ts';

const KEY = 'round';

export class PurgeLease {
  constructor(
    private readonly kv: KV,
    private readonly holder: string,
  ) {}

  /**
   * Takes the next round if `due(sinceLastMs)` says one is due, the time since the last round
   * began by its holder's clock (Infinity when none is known): true when this service runs it.
   */
  async take(due: (sinceLastMs: number) => boolean): Promise<boolean> {
    const entry = await this.kv.get(KEY);
    const last = entry?.operation === 'PUT' ? entry.json<{ startedAt: number }>().startedAt : undefined;
    if (!due(last === undefined ? Infinity : Date.now() - last)) return false;
    const value = JSON.stringify({ holder: this.holder, startedAt: Date.now() });
    try {
      if (entry) await this.kv.update(KEY, value, entry.revision);
      else await this.kv.create(KEY, value);
      return true;
    } catch (error) {
      if (isConflict(error)) return false;
      throw error;
    }
  }
}

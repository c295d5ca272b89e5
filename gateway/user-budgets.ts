// What one user may do beside the request budget, so that one user's burst is refused with
// 429 at the gateway before it fills what every user shares (the bus, the hosts, ClickHouse,
// the ROWS stream) and turns other users' requests into 503s. Counted per user in each
// gateway process, like the request budget.
import type { GatewayConfig } from '../bus/config.ts';
import { Counts } from './counts.ts';
import { RateLimit } from './rate-limit.ts';

export interface UserBudgets {
  /** Requests being answered at once. */
  inFlight: Counts;
  /** Session creates per minute. */
  creates: RateLimit;
  /** Session deletes per minute: each purges rows from shared tables. */
  deletes: RateLimit;
  /** Session renames per minute: each writes the bucket and the shared index. */
  renames: RateLimit;
  /** Custom events per second, and their bytes as sent. */
  events: RateLimit;
  eventBytes: RateLimit;
}

export function userBudgets(config: GatewayConfig): UserBudgets {
  return {
    inFlight: new Counts(config.requestsInFlightPerUser),
    creates: new RateLimit(config.sessionCreatesPerMinute, 60),
    deletes: new RateLimit(config.sessionDeletesPerMinute, 60),
    renames: new RateLimit(config.sessionRenamesPerMinute, 60),
    events: new RateLimit(config.eventsPerSecond, 1),
    eventBytes: new RateLimit(config.eventBytesPerSecond, 1),
  };
}

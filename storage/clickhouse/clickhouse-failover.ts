// One client over several ClickHouse servers that hold the same tables (nodes of a cluster):
// requests go to one server until it cannot be reached, then to the next, and the request that
// found it gone is sent again there, so the loss of a node costs a caller one slower request,
// not an error. Only failures to reach a server move on; an error ClickHouse answers with is
// the caller's, wherever it is sent. Sending again is safe for what storage sends: reads, DDL
// that may run twice, and inserts into tables that deduplicate.
import type { ClickHouseClient } from '@clickhouse/client';

const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH']);
// What the client says when a socket closes mid-request or a request times out.
const CONNECTION_MESSAGES = /socket hang up|^Timeout error|other side closed/i;

export function isConnectionError(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return (typeof code === 'string' && CONNECTION_CODES.has(code)) || (typeof message === 'string' && CONNECTION_MESSAGES.test(message));
}

const SENT_AGAIN = new Set<PropertyKey>(['query', 'command', 'exec', 'insert']);

/**
 * A client that sends each request to the current server and, when it cannot be reached,
 * to the next (in the given order, round), each server tried once per request.
 * `onFailover` hears of every move.
 */
export function failoverClient(clients: ClickHouseClient[], onFailover?: (from: number, to: number, error: unknown) => void): ClickHouseClient {
  if (clients.length === 1) return clients[0]!;
  let current = 0;
  const send = async (method: PropertyKey, args: unknown[]): Promise<unknown> => {
    for (let tried = 1; ; tried++) {
      const at = current;
      try {
        return await (clients[at] as unknown as Record<PropertyKey, (...args: unknown[]) => Promise<unknown>>)[method]!(...args);
      } catch (error) {
        if (!isConnectionError(error) || tried >= clients.length) throw error;
        // Requests in flight together all fail over once, not one server each.
        if (current === at) {
          current = (at + 1) % clients.length;
          onFailover?.(at, current, error);
        }
      }
    }
  };
  return new Proxy(clients[0]!, {
    get(_, property) {
      if (SENT_AGAIN.has(property)) return (...args: unknown[]) => send(property, args);
      if (property === 'close') return async () => void (await Promise.all(clients.map((client) => client.close())));
      const value = Reflect.get(clients[current]!, property);
      return typeof value === 'function' ? value.bind(clients[current]) : value;
    },
  });
}

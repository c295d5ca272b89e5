// HTTP requests of the launcher and the test support, on node:http. Node's fetch loads a
// WHATWG stack of its own the first time a process calls it (some 0.2 s of CPU) and costs 0.6-1.4
// ms of CPU more than node:http for each request after that; a test file asks the gateway and
// the processes' /readyz hundreds of times, and the whole suite shares two cores.
import { Agent, request, type IncomingHttpHeaders } from 'node:http';

export interface HttpRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** Ends the request, answered or not, with an AbortError. */
  signal?: AbortSignal;
}

export interface HttpReply {
  status: number;
  /** As fetch's `Headers`: a value by its name in any case, or null; each [name, value] in turn. */
  headers: { get(name: string): string | null } & Iterable<[string, string]>;
  text: string;
}

/** Requests that keep their connections open for the next, until `close()`. */
export class HttpClient {
  private readonly agent = new Agent({ keepAlive: true });

  request(url: string, options: HttpRequest = {}): Promise<HttpReply> {
    return send(url, options, this.agent);
  }

  close(): void {
    this.agent.destroy();
  }
}

/** One request on a connection of its own, closed once answered. */
export function httpRequest(url: string, options: HttpRequest = {}): Promise<HttpReply> {
  return send(url, options, false);
}

function send(url: string, { method = 'GET', headers = {}, body, signal }: HttpRequest, agent: Agent | false): Promise<HttpReply> {
  return new Promise((resolve, reject) => {
    const sent = request(url, { method, headers, agent, signal }, (reply) => {
      const chunks: Buffer[] = [];
      reply.on('data', (chunk: Buffer) => chunks.push(chunk));
      reply.on('error', reject);
      reply.on('end', () => resolve({ status: reply.statusCode ?? 0, headers: replyHeaders(reply.headers), text: Buffer.concat(chunks).toString('utf8') }));
    });
    sent.on('error', reject);
    sent.end(body);
  });
}

/** Node's headers of a reply, read as fetch's `Headers` are. */
export function replyHeaders(headers: IncomingHttpHeaders): HttpReply['headers'] {
  const joined = (value: string | string[]) => (Array.isArray(value) ? value.join(', ') : value);
  return {
    get: (name) => {
      const value = headers[name.toLowerCase()];
      return value === undefined ? null : joined(value);
    },
    *[Symbol.iterator]() {
      for (const [name, value] of Object.entries(headers)) if (value !== undefined) yield [name, joined(value)];
    },
  };
}

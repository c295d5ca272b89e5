// Each process's operational endpoints, on a port of their own (METRICS_PORT): Prometheus
// metrics, liveness and readiness. Apart from the API so that a scrape or a probe spends no
// API budget, needs no token, and is not exposed wherever the API is.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { collectDefaultMetrics, Registry } from 'prom-client';
import type { SharedConfig } from './config.ts';
import type { Logger } from './log.ts';

/**
 * How often the event loop's lag is sampled. prom-client's 10 ms wakes the process 100 times a
 * second, which costs an idle process about 8 ms of CPU a second (0.8 % of a core, most of what
 * an idle gateway spends); every 100 ms costs a tenth of that. A stall still shows: it delays
 * the next sample, whatever the period.
 */
const EVENT_LOOP_SAMPLE_MS = 100;

/** A registry of the process's own (never prom-client's global one), with Node's process metrics on it. */
export function createRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  return registry;
}

export class MetricsServer {
  private ready = false;

  private constructor(
    private readonly server: Server,
    /** Where it listens, e.g. http://127.0.0.1:9464 (the port the OS chose when METRICS_PORT is 0). */
    readonly url: string,
  ) {}

  /** Listens at once, not ready: /livez answers 200 and /readyz 503 until markReady(). */
  static async start(registry: Registry, config: Pick<SharedConfig, 'metricsHost' | 'metricsPort'>, log: Logger): Promise<MetricsServer> {
    let metrics: MetricsServer | undefined;
    const server = createServer((request, response) => {
      answer(request, response, registry, metrics?.ready ?? false).catch((error: unknown) => {
        log.error({ err: error }, 'metrics could not be collected');
        if (!response.headersSent) response.writeHead(500, { 'Content-Type': 'text/plain' });
        response.end('metrics could not be collected\n');
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.metricsPort, config.metricsHost, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const { address, family, port } = server.address() as AddressInfo;
    const url = `http://${family === 'IPv6' ? `[${address}]` : address}:${port}`;
    metrics = new MetricsServer(server, url);
    log.info({ url }, 'metrics, /livez and /readyz listening');
    return metrics;
  }

  /** The process serves (the point where it starts answering its health subject). */
  markReady(): void {
    this.ready = true;
  }

  /** The process is stopping: /readyz answers 503 again so no new work is routed to it. */
  markStopping(): void {
    this.ready = false;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

async function answer(request: IncomingMessage, response: ServerResponse, registry: Registry, ready: boolean): Promise<void> {
  const path = (request.url ?? '').split('?')[0];
  if (request.method !== 'GET' && request.method !== 'HEAD') return plain(response, 405, 'method not allowed');
  switch (path) {
    case '/metrics': {
      const text = await registry.metrics();
      response.writeHead(200, { 'Content-Type': registry.contentType });
      response.end(request.method === 'HEAD' ? undefined : text);
      return;
    }
    // Answered at all means the event loop runs: nothing else is worth restarting a process for.
    case '/livez':
      return plain(response, 200, 'ok');
    case '/readyz':
      return ready ? plain(response, 200, 'ready') : plain(response, 503, 'not ready');
    default:
      return plain(response, 404, 'not found: /metrics, /livez, /readyz');
  }
}

function plain(response: ServerResponse, status: number, text: string): void {
  response.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8' });
  response.end(`${text}\n`);
}

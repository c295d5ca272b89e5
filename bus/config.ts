// The one place that reads the environment. Every process imports `config` from here;
// nothing else touches process.env, so the README's table of variables is this file.
import { resolve } from 'node:path';
import { hostname } from 'node:os';

const projectRoot = resolve(import.meta.dirname, '..');

function text(name: string, fallback: string): string {
  const value = process.env[name];
  return value === undefined || value === '' ? fallback : value;
}

// Names that become NATS subject tokens and log fields.
function identifier(name: string, fallback: string): string {
  const value = text(name, fallback);
  if (!/^[A-Za-z0-9_.-]{1,128}$/.test(value)) {
    throw new Error(`environment variable ${name} may hold only letters, digits, -, _ and ., got "${value}"`);
  }
  return value;
}

function optionalText(name: string): string | undefined {
  const value = process.env[name];
  return value === undefined || value === '' ? undefined : value;
}

function number(name: string, fallback: number, min = 0): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min) {
    throw new Error(`environment variable ${name} must be a number >= ${min}, got "${raw}"`);
  }
  return value;
}

function flag(name: string, fallback: boolean): boolean {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new Error(`environment variable ${name} must be true or false, got "${raw}"`);
}

const varDir = resolve(text('VAR_DIR', resolve(projectRoot, 'var')));

export const config = {
  projectRoot,
  varDir,
  logLevel: text('LOG_LEVEL', 'info'),

  // gateway
  host: text('HOST', '127.0.0.1'),
  port: number('PORT', 8080),
  bodyLimitBytes: number('BODY_LIMIT_BYTES', 1024 * 1024, 1),
  authTokensFile: optionalText('AUTH_TOKENS_FILE'),
  authJwtSecret: optionalText('AUTH_JWT_SECRET'),
  requestTimeoutMs: number('BUS_REQUEST_TIMEOUT_MS', 5000, 1),
  // REST budgets, per gateway process: requests per user per window; failed authentications per client address per minute.
  rateLimitRequests: number('RATE_LIMIT_REQUESTS', 1000, 1),
  rateLimitWindowSeconds: number('RATE_LIMIT_WINDOW_SECONDS', 10, 1),
  authFailuresPerMinute: number('AUTH_FAILURES_PER_MINUTE', 60, 1),
  wsConnectionsPerUser: number('WS_CONNECTIONS_PER_USER', 20, 1),
  wsUnauthenticatedPerAddress: number('WS_UNAUTHENTICATED_PER_ADDRESS', 10, 1),
  wsIdleSeconds: number('WS_IDLE_SECONDS', 65, 1),
  wsSubscriptionsPerConnection: number('WS_SUBSCRIPTIONS_PER_CONNECTION', 50, 1),
  wsMessagesPerMinute: number('WS_MESSAGES_PER_MINUTE', 600, 1),

  // bus and storage
  natsUrl: text('NATS_URL', 'nats://127.0.0.1:4222'),
  clickhouseUrl: text('CLICKHOUSE_URL', 'http://127.0.0.1:8123'),
  clickhouseDatabase: text('CLICKHOUSE_DATABASE', 'emotions'),
  // Only for the local ClickHouse that `npm start` runs; clients use the HTTP URL.
  clickhouseTcpPort: number('CLICKHOUSE_TCP_PORT', 9000, 1),
  clickhouseUser: text('CLICKHOUSE_USER', 'default'),
  clickhousePassword: text('CLICKHOUSE_PASSWORD', ''),
  writerBatchRows: number('WRITER_BATCH_ROWS', 5000, 1),
  writerFlushMs: number('WRITER_FLUSH_MS', 1000, 10),
  storageWriter: flag('STORAGE_WRITER', true),
  // The durable row buffer: how much it may hold while ClickHouse is away.
  rowsStreamMaxBytes: number('ROWS_STREAM_MAX_BYTES', 1024 ** 3, 1024 * 1024),

  // actor host
  hostId: identifier('HOST_ID', `${hostname()}-${process.pid}`),
  hostCapacity: number('HOST_CAPACITY', 16, 1),
  sessionMaxSeconds: number('SESSION_MAX_SECONDS', 43200, 1),
  // Quotas: active sessions per user across the cluster, sensor sources per session.
  userMaxActiveSessions: number('USER_MAX_ACTIVE_SESSIONS', 8, 1),
  sessionMaxSources: number('SESSION_MAX_SOURCES', 32, 1),
  // How long an Idempotency-Key of a create is remembered.
  idempotencyKeySeconds: number('IDEMPOTENCY_KEY_SECONDS', 86400, 60),
  streamUnreachableSeconds: number('STREAM_UNREACHABLE_SECONDS', 60, 1),
  heartbeatSeconds: number('HEARTBEAT_SECONDS', 3, 0.1),
  // A session whose heartbeat is older than this is taken over by another host.
  takeoverSeconds: number('TAKEOVER_SECONDS', 10, 0.5),
  // "false", "true" or a list of host:port, ip:port, cidr[:port] (actors/egress/allowance.ts).
  allowPrivateStreamHosts: text('ALLOW_PRIVATE_STREAM_HOSTS', 'false'),
  // Loaded into ffmpeg to hold every connection it makes to the policy above; built by ops/setup.sh.
  egressGuardLibrary: text('EGRESS_GUARD_LIBRARY', resolve(varDir, 'lib', 'egress-guard.so')),
  analysisFps: number('ANALYSIS_FPS', 4, 0.1),
  ffmpegPath: text('FFMPEG_PATH', 'ffmpeg'),
  // rtmps: verify the server's certificate (against the system's CAs, or this file's).
  streamTlsVerify: flag('STREAM_TLS_VERIFY', true),
  streamTlsCaFile: optionalText('STREAM_TLS_CA_FILE'),
  transcriptQueueLimit: number('TRANSCRIPT_QUEUE_LIMIT', 8, 1),

  // assets
  modelsDir: resolve(text('MODELS_DIR', resolve(varDir, 'models'))),
  mediaDir: resolve(text('MEDIA_DIR', resolve(varDir, 'media'))),
  assetsMirror: optionalText('ASSETS_MIRROR'),
} as const;

export type Config = typeof config;

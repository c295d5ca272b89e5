// The one place that reads the environment, in sections: the settings every process shares and
// one section per process kind. Each process's main.ts reads its own sections once, at start
// (readGatewayConfig(), readHostConfig(), readStorageConfig()), and passes what it read down;
// nothing else touches process.env. readConfig() reads them all, for tests and tools that start
// several kinds. docs/configuration.md lists the variables by section, as here
// (test/unit/docs-configuration.test.ts holds them equal).
import { resolve } from 'node:path';
import { availableParallelism, hostname } from 'node:os';

const projectRoot = resolve(import.meta.dirname, '..');

/** Typed reads of environment variables; a value that does not parse stops the process at start. */
export class Environment {
  constructor(private readonly env: NodeJS.ProcessEnv) {}

  text(name: string, fallback: string): string {
    const value = this.env[name];
    return value === undefined || value === '' ? fallback : value;
  }

  /** Names that become NATS subject tokens and log fields. */
  identifier(name: string, fallback: string): string {
    const value = this.text(name, fallback);
    if (!/^[A-Za-z0-9_.-]{1,128}$/.test(value)) {
      throw new Error(`environment variable ${name} may hold only letters, digits, -, _ and ., got "${value}"`);
    }
    return value;
  }

  optionalText(name: string): string | undefined {
    const value = this.env[name];
    return value === undefined || value === '' ? undefined : value;
  }

  number(name: string, fallback: number, min = 0): number {
    const raw = this.env[name];
    if (raw === undefined || raw === '') return fallback;
    const value = Number(raw);
    if (!Number.isFinite(value) || value < min) {
      throw new Error(`environment variable ${name} must be a number >= ${min}, got "${raw}"`);
    }
    return value;
  }

  /** A number, or one of the names in `named` for the value it stands for. */
  namedOrNumber(name: string, named: Record<string, number>, fallback: number, min = 0): number {
    const raw = this.env[name];
    if (raw !== undefined && Object.hasOwn(named, raw)) return named[raw]!;
    if (raw !== undefined && raw !== '' && !Number.isFinite(Number(raw))) {
      throw new Error(`environment variable ${name} must be ${Object.keys(named).join(', ')} or a number >= ${min}, got "${raw}"`);
    }
    return this.number(name, fallback, min);
  }

  wholeNumber(name: string, fallback: number, min = 0): number {
    const value = this.number(name, fallback, min);
    if (!Number.isInteger(value)) throw new Error(`environment variable ${name} must be a whole number >= ${min}, got "${this.env[name]}"`);
    return value;
  }

  flag(name: string, fallback: boolean): boolean {
    const raw = this.env[name];
    if (raw === undefined || raw === '') return fallback;
    if (/^(1|true|yes|on)$/i.test(raw)) return true;
    if (/^(0|false|no|off)$/i.test(raw)) return false;
    throw new Error(`environment variable ${name} must be true or false, got "${raw}"`);
  }
}

/** Read by every process kind: the settings more than one kind needs, and the bus's own. */
export function sharedSettings(read: Environment) {
  const sessionMaxSeconds = read.number('SESSION_MAX_SECONDS', 43200, 1);
  return {
    projectRoot,
    varDir: resolve(read.text('VAR_DIR', resolve(projectRoot, 'var'))),
    logLevel: read.text('LOG_LEVEL', 'info'),
    // Every process: /metrics, /livez, /readyz (bus/metrics-server.ts). Port 0: one the OS picks,
    // logged, so processes started side by side never collide; production names one per process.
    metricsHost: read.text('METRICS_HOST', '127.0.0.1'),
    metricsPort: read.number('METRICS_PORT', 0),
    hostId: read.identifier('HOST_ID', `${hostname()}-${process.pid}`),
    natsUrl: read.text('NATS_URL', 'nats://127.0.0.1:4222'),
    // How many NATS servers keep each JetStream stream and KV bucket: 1 on one server, 3 on a
    // cluster (a bucket or stream then survives the loss of one server).
    natsReplicas: read.wholeNumber('NATS_REPLICAS', 1, 1),
    requestTimeoutMs: read.number('BUS_REQUEST_TIMEOUT_MS', 5000, 1),
    sessionMaxSeconds,
    // The session records' bucket and caches, bounded in bytes (a record is at most
    // LARGEST_SESSION_RECORD_BYTES, bus/session-record-size.ts). A record not written for
    // SESSION_RECORD_MAX_AGE_SECONDS leaves the bucket: only finished ones, since an active
    // session's heartbeat rewrites its record every HEARTBEAT_SECONDS; at least
    // SESSION_MAX_SECONDS plus an hour, so that not even a session left without any host ages
    // out before its expiry.
    sessionsBucketMaxBytes: read.wholeNumber('SESSIONS_BUCKET_MAX_BYTES', 256 * 1024 ** 2, 16 * 1024 ** 2),
    sessionRecordMaxAgeSeconds: read.number('SESSION_RECORD_MAX_AGE_SECONDS', 7 * 86400, sessionMaxSeconds + 3600),
    sessionRecordCacheBytes: read.wholeNumber('SESSION_RECORD_CACHE_BYTES', 64 * 1024 ** 2, 1024 * 1024),
  } as const;
}

/** Read by the gateway alone. */
export function gatewaySettings(read: Environment) {
  return {
    gatewayHost: read.text('GATEWAY_HOST', '127.0.0.1'),
    gatewayPort: read.number('GATEWAY_PORT', 8080),
    bodyLimitBytes: read.number('BODY_LIMIT_BYTES', 1024 * 1024, 1),
    authTokensFile: read.optionalText('AUTH_TOKENS_FILE'),
    authJwtSecret: read.optionalText('AUTH_JWT_SECRET'),
    // Checked in every JWT when set: its `aud` must include this, its `iss` must be this.
    jwtAudience: read.optionalText('JWT_AUDIENCE'),
    jwtIssuer: read.optionalText('JWT_ISSUER'),
    // Proxies (addresses or CIDR blocks, comma-separated) whose X-Forwarded-For names the client;
    // none by default: the TCP peer is the client (gateway/client-address.ts).
    trustedProxies: read.text('TRUSTED_PROXIES', '').split(',').map((entry) => entry.trim()).filter(Boolean),
    // REST budgets, per gateway process: requests per user per window; failed authentications per client address per minute.
    rateLimitRequests: read.number('RATE_LIMIT_REQUESTS', 1000, 1),
    rateLimitWindowSeconds: read.number('RATE_LIMIT_WINDOW_SECONDS', 10, 1),
    authFailuresPerMinute: read.number('AUTH_FAILURES_PER_MINUTE', 60, 1),
    // A refusal past any of these budgets is answered this late: a client that floods waiting
    // for each answer is slowed to a few requests a second per connection (gateway/middleware/hold-refusals.ts).
    rateLimitRefusalHoldMs: read.wholeNumber('RATE_LIMIT_REFUSAL_HOLD_MS', 250),
    // Per user and gateway process (gateway/user-budgets.ts): what one user's burst may take of
    // what all share. Ordinary use fits: the dashboard has at most 5 requests of a tab in flight;
    // a fleet of cameras starts at once; the events benchmark's target is 20,000 events/s.
    requestsInFlightPerUser: read.wholeNumber('REQUESTS_IN_FLIGHT_PER_USER', 16, 1),
    sessionCreatesPerMinute: read.wholeNumber('SESSION_CREATES_PER_MINUTE', 60, 1),
    sessionDeletesPerMinute: read.wholeNumber('SESSION_DELETES_PER_MINUTE', 30, 1),
    // Each rename is a compare-and-set in the bucket and a row of the shared index on every storage service that writes.
    sessionRenamesPerMinute: read.wholeNumber('SESSION_RENAMES_PER_MINUTE', 60, 1),
    eventsPerSecond: read.wholeNumber('EVENTS_PER_SECOND', 25_000, 1),
    eventBytesPerSecond: read.wholeNumber('EVENT_BYTES_PER_SECOND', 2 * 1024 * 1024, 1),
    wsConnectionsPerUser: read.number('WS_CONNECTIONS_PER_USER', 20, 1),
    wsUnauthenticatedPerAddress: read.number('WS_UNAUTHENTICATED_PER_ADDRESS', 10, 1),
    // A socket that has not authenticated this long after opening is closed (the dashboard's takes milliseconds).
    wsAuthTimeoutSeconds: read.number('WS_AUTH_TIMEOUT_SECONDS', 5, 0.1),
    wsIdleSeconds: read.number('WS_IDLE_SECONDS', 65, 1),
    wsSubscriptionsPerConnection: read.number('WS_SUBSCRIPTIONS_PER_CONNECTION', 50, 1),
    // 20 dashboard tabs (WS_CONNECTIONS_PER_USER), each following a session on 5 channels.
    wsSubscriptionsPerUser: read.wholeNumber('WS_SUBSCRIPTIONS_PER_USER', 100, 1),
    // Four dashboard tabs following a session that gets a gateway's whole event budget
    // (25,000 small events/s: about 4 MiB/s of pushed events each).
    wsPushBytesPerSecondPerUser: read.wholeNumber('WS_PUSH_BYTES_PER_SECOND_PER_USER', 16 * 1024 * 1024, 1024),
    wsMessagesPerMinute: read.number('WS_MESSAGES_PER_MINUTE', 600, 1),
    // WebSocket upgrades per client address (an IPv6 /64) per minute: a dashboard opens one per tab and one per reconnect.
    wsUpgradesPerAddressPerMinute: read.wholeNumber('WS_UPGRADES_PER_ADDRESS_PER_MINUTE', 120, 1),
  } as const;
}

/** Read by the actor host alone; its files' defaults are under the shared VAR_DIR. */
export function hostSettings(read: Environment, varDir: string) {
  const heartbeatSeconds = read.number('HEARTBEAT_SECONDS', 3, 0.1);
  const hostCapacity = read.number('HOST_CAPACITY', 10, 1);
  return {
    hostCapacity,
    // What one session may cost (cores) before its own face effort comes down, and far past
    // which for long it is stopped (actors/session-budgets.ts): by default its share of the
    // cores the host is sized for. The capacity benchmark lifts it to measure streams at full effort.
    sessionBudgetCores: read.number('SESSION_BUDGET_CORES', availableParallelism() / hostCapacity, 0.001),
    // How long a session may stay past three budgets, its face effort lowered, before it is stopped.
    sessionOverBudgetStopSeconds: read.number('SESSION_OVER_BUDGET_STOP_SECONDS', 60, 1),
    // Quotas: active sessions per user across the cluster, sensor sources per session.
    userMaxActiveSessions: read.number('USER_MAX_ACTIVE_SESSIONS', 8, 1),
    sessionMaxSources: read.number('SESSION_MAX_SOURCES', 32, 1),
    // How long an Idempotency-Key of a create is remembered.
    idempotencyKeySeconds: read.number('IDEMPOTENCY_KEY_SECONDS', 86400, 60),
    streamUnreachableSeconds: read.number('STREAM_UNREACHABLE_SECONDS', 60, 1),
    heartbeatSeconds,
    // A session whose heartbeat is older than this is taken over by another host. At least three
    // beats: an owner whose connection drops under a heartbeat loses that beat, and the next
    // one, a period later, must land in time.
    takeoverSeconds: read.number('TAKEOVER_SECONDS', 10, 3 * heartbeatSeconds),
    // "false", "true" or a list of host:port, ip:port, cidr[:port] (actors/egress/allowance.ts).
    allowPrivateStreamHosts: read.text('ALLOW_PRIVATE_STREAM_HOSTS', 'false'),
    // Where a stream's host name is resolved at creation, and how long it may take (actors/egress/resolver.ts).
    streamDnsServers: read.text('STREAM_DNS_SERVERS', '').split(',').map((server) => server.trim()).filter(Boolean),
    streamDnsTimeoutMs: read.number('STREAM_DNS_TIMEOUT_MS', 2000, 1),
    // Loaded into ffmpeg to hold every connection it makes to the policy above; built by ops/setup.sh.
    egressGuardLibrary: read.text('EGRESS_GUARD_LIBRARY', resolve(varDir, 'lib', 'egress-guard.so')),
    analysisFps: read.number('ANALYSIS_FPS', 4, 0.1),
    // A stream lowered to a lighter step of face effort (actors/face/face-effort.ts,
    // FACE_EFFORT_LADDER) goes back up after this long calm; the tests shorten it.
    faceEffortCalmSeconds: read.number('FACE_EFFORT_CALM_SECONDS', 20, 1),
    ffmpegPath: read.text('FFMPEG_PATH', 'ffmpeg'),
    // rtmps: verify the server's certificate (against the system's CAs, or this file's).
    streamTlsVerify: read.flag('STREAM_TLS_VERIFY', true),
    streamTlsCaFile: read.optionalText('STREAM_TLS_CA_FILE'),
    transcriptionQueueLimit: read.number('TRANSCRIPTION_QUEUE_LIMIT', 8, 1),
    // Threads transcribing speech, shared by the host's sessions; each holds its own copy of
    // the model. Half the cores: on two, a second thread took its core from face analysis
    // (ops/bench/README-capacity.md, "Transcription threads").
    transcriptionThreads: read.wholeNumber('TRANSCRIPTION_THREADS', Math.max(1, Math.floor(availableParallelism() / 2)), 1),
    // Speech segments whose voice stands less than this many dB above their own noise floor are
    // transcribed by Moonshine base, the others by tiny: base makes about half of tiny's word
    // errors under noise for twice its CPU (ops/bench/README-speech-noise.md). `tiny` sends
    // every segment to tiny (base is never loaded), `base` every segment to base.
    noisySpeechBelowSnrDb: read.namedOrNumber('NOISY_SPEECH_BELOW_SNR_DB', { tiny: 0, base: Infinity }, 30, 0),
    // Audio a stream may have waiting for voice analysis before its oldest is skipped.
    voiceMaxBacklogSeconds: read.number('VOICE_MAX_BACKLOG_SECONDS', 5, 0.5),
    modelsDir: resolve(read.text('MODELS_DIR', resolve(varDir, 'models'))),
  } as const;
}

/** Read by the storage service alone. */
export function storageSettings(read: Environment) {
  return {
    // Comma-separated: the storage service moves to the next when one stops answering.
    clickhouseUrl: read.text('CLICKHOUSE_URL', 'http://127.0.0.1:8123'),
    clickhouseDatabase: read.text('CLICKHOUSE_DATABASE', 'emotions'),
    // A cluster of the servers' remote_servers: tables replicated and sharded across it (storage/schema/schema.ts).
    clickhouseCluster: read.optionalText('CLICKHOUSE_CLUSTER'),
    clickhouseUser: read.text('CLICKHOUSE_USER', 'default'),
    clickhousePassword: read.text('CLICKHOUSE_PASSWORD', ''),
    writerBatchRows: read.number('WRITER_BATCH_ROWS', 5000, 1),
    writerFlushMs: read.number('WRITER_FLUSH_MS', 1000, 10),
    // Bytes of row messages one writer batch holds at most: a backlog of 1 MiB event batches
    // pulled 5,000 at a time would take gigabytes. At least the NATS server's max_payload (8 MB)
    // plus 4 KiB, checked at start: a message that fits no pull would never be delivered.
    writerPullMaxBytes: read.wholeNumber('WRITER_PULL_MAX_BYTES', 64 * 1024 ** 2, 1024 * 1024),
    // ClickHouse connections of a storage service by purpose (storage/clickhouse/clickhouse-pools.ts), so
    // that slow reads never hold the sockets the writer and the session index need.
    clickhouseReadConnections: read.wholeNumber('CLICKHOUSE_READ_CONNECTIONS', 20, 2),
    clickhouseWriterConnections: read.wholeNumber('CLICKHOUSE_WRITER_CONNECTIONS', 2, 1),
    clickhouseIndexConnections: read.wholeNumber('CLICKHOUSE_INDEX_CONNECTIONS', 2, 1),
    // Reads one user may have being answered at once by one storage service; below the read
    // connections, so that one user's slow reads leave sockets for the others. A dashboard tab has at most 5.
    storageReadsInFlightPerUser: read.wholeNumber('STORAGE_READS_IN_FLIGHT_PER_USER', 8, 1),
    storageWriter: read.flag('STORAGE_WRITER', true),
    // A test-only fault-injection hook: the storage process exits right after its Nth insert,
    // before acknowledging it, as a machine lost at that moment would (0: never), a window no
    // outside kill can hit.
    writerExitAfterInserts: read.wholeNumber('WRITER_EXIT_AFTER_INSERTS', 0, 0),
    // The durable row buffer: how much it may hold while ClickHouse is away.
    rowsStreamMaxBytes: read.number('ROWS_STREAM_MAX_BYTES', 1024 ** 3, 1024 * 1024),
    // The newest sessions of each user a storage service keeps in memory, to answer the first
    // pages of a session list without ClickHouse (storage/sessions/newest-sessions.ts).
    sessionListMemoryPerUser: read.wholeNumber('SESSION_LIST_MEMORY_PER_USER', 200, 0),
    // All users' together (about 760 bytes each): past it, the users listed least lately are
    // forgotten and ClickHouse answers them until their next list reads them back.
    sessionListMemoryTotal: read.wholeNumber('SESSION_LIST_MEMORY_TOTAL', 500_000, 0),
    // Deleted sessions' rows leave ClickHouse in rounds, one ALTER ... DELETE per table for up to
    // this many sessions, every window (storage/purge/purge-rounds.ts); the queue waits in the KV
    // bucket `purges`, bounded in bytes (a full one answers a DELETE 503 until a round drains it).
    purgeWindowSeconds: read.number('PURGE_WINDOW_SECONDS', 60, 1),
    purgeBatchSessions: read.wholeNumber('PURGE_BATCH_SESSIONS', 1000, 1),
    purgeQueueMaxBytes: read.wholeNumber('PURGE_QUEUE_MAX_BYTES', 64 * 1024 ** 2, 1024 * 1024),
  } as const;
}

export type SharedConfig = ReturnType<typeof sharedSettings>;
export type GatewayConfig = SharedConfig & ReturnType<typeof gatewaySettings>;
export type HostConfig = SharedConfig & ReturnType<typeof hostSettings>;
export type StorageConfig = SharedConfig & ReturnType<typeof storageSettings>;
/** Every section: for tests and tools that start or inspect several process kinds. */
export type Config = GatewayConfig & HostConfig & StorageConfig;

export function readGatewayConfig(env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  const read = new Environment(env);
  return { ...sharedSettings(read), ...gatewaySettings(read) };
}

export function readHostConfig(env: NodeJS.ProcessEnv = process.env): HostConfig {
  const read = new Environment(env);
  const shared = sharedSettings(read);
  return { ...shared, ...hostSettings(read, shared.varDir) };
}

export function readStorageConfig(env: NodeJS.ProcessEnv = process.env): StorageConfig {
  const read = new Environment(env);
  return { ...sharedSettings(read), ...storageSettings(read) };
}

export function readConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const read = new Environment(env);
  const shared = sharedSettings(read);
  return { ...shared, ...gatewaySettings(read), ...hostSettings(read, shared.varDir), ...storageSettings(read) };
}

import { createPrivateKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/**
 * Typed configuration, read once from the environment and validated at start.
 * A bad value stops the process with one line naming the variable (see main.ts).
 */
export interface AppConfig {
  port: number;
  host: string;
  /** Public base URL used in cards and links; never derived from the Host header. */
  publicBaseUrl: string;
  /** PEM private key (P-256 or Ed25519) that signs Agent Cards; absent → a generated key kept in the database. */
  cardSigningKeyFile: string | null;
  /** PostgreSQL connection string; absent → embedded PGlite under dataDir. */
  databaseUrl: string | null;
  /**
   * `DATABASE_PIPELINE`: `on` sends each group of a transaction's statements as one pipeline
   * (src/database/pipeline.ts, on node-postgres's internals); `off` sends them one at a time
   * through its public API — the switch should a `pg` upgrade break those internals
   * (src/database/README.md). Read once, at start.
   */
  databasePipeline: boolean;
  dataDir: string;
  /**
   * `EXPRESS_SERVER_ADAPTER`: `on` makes Node's requests and responses with Express's
   * prototypes from the start (src/common/express-server.ts); `off` is Nest's own Express
   * adapter — the switch should an Express or Node upgrade change what it relies on
   * (src/database/README.md). Read once, at start.
   */
  expressServerAdapter: boolean;
  /** The built Console (React app) served at /console/. */
  consoleDir: string;
  migrationsRun: boolean;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** `LOG_FORMAT`: `json` lines, `pretty` (one human-readable line per entry), or `auto` — pretty when stdout is a terminal. */
  logFormat: 'json' | 'pretty' | 'auto';
  consoleSignup: 'open' | 'closed';
  /** Single sign-on to the Console (docs/api.md §13, single sign-on): the OpenID Connect provider, or null when off. */
  consoleOidc: ConsoleOidcConfig | null;
  sessionTtlHours: number;
  /** `OAUTH_TOKEN_TTL_SECONDS`: how long an access token from `POST /oauth/token` lives (docs/api.md §17). */
  oauthTokenTtlSeconds: number;
  /** How long an agent signup's claim code stays valid. */
  claimCodeTtlHours: number;
  /** Approval requests (docs/api.md §16): how long one waits for a decision, and how many one organization may have pending. */
  approvals: {
    ttlHours: number;
    maxPending: number;
  };
  /** Console teams (docs/api.md §13): how long an invitation can be accepted, and the per-organization limits. */
  console: {
    inviteTtlHours: number;
    maxMembers: number;
    maxOpenInvites: number;
  };
  bcryptCost: number;
  /** How often buffered `last_used_at` stamps are written. */
  keyUsageFlushMs: number;
  bodyLimitBytes: number;
  protocolBodyLimitBytes: number;
  loginFailureLimit: number;
  loginFailureWindowSeconds: number;
  trustProxy: boolean;
  shutdownGraceMs: number;
  /** Shared rate-limit counters; unset → per-instance memory. */
  redisUrl: string | null;
  /** Namespace of this deployment's counters in Redis. */
  redisKeyPrefix: string;
  rateLimits: {
    protocolPerMinute: number;
    restPerMinute: number;
    publicPerMinute: number;
    signupsPerHour: number;
    loginAttemptsPerMinute: number;
    /** Webhook test pings per organization (`POST /api/v1/webhooks/{id}/test`). */
    webhookTestsPerMinute: number;
    upstreamTestsPerMinute: number;
  };
  /** How long a blocking A2A send waits for the worker before returning the task as it is. */
  protocolBlockingTimeoutMs: number;
  /** Open streams and blocking sends per API key, on this instance (beyond → 429). */
  protocolMaxOpenCallsPerKey: number;
  /** Messages one task may hold (beyond → 409 / -32004). */
  ledgerMaxMessagesPerTask: number;
  /** Artifact content one task may hold, appends included (beyond → 409 / -32004); also what one task read returns at most. */
  ledgerMaxArtifactBytesPerTask: number;
  /** The most history messages one task read returns (the default when none is asked for). */
  ledgerMaxHistory: number;
  /** How deep a delegation tree may grow (docs/api.md §18): a send that would start a deeper task is refused. */
  ledgerMaxTreeDepth: number;
  /** Interval of SSE keep-alive comments on protocol streams. */
  sseKeepaliveMs: number;
  /** A protocol stream is closed by the server after this long. */
  sseMaxDurationMs: number;
  /** The gRPC binding (docs/api.md §5): its listening port (0: an ephemeral one), or null when `GRPC_PORT=off`. */
  grpcPort: number | null;
  grpcHost: string;
  /** `host:port` that Agent Cards advertise for gRPC; null when gRPC is off. */
  grpcPublicAddress: string | null;
  /** The metrics listener (docs/operations.md, "Metrics"): its port (0: an ephemeral one), or null when `METRICS_PORT=off`. */
  metricsPort: number | null;
  metricsHost: string;
  /** Lifts the https-only and public-address rules for webhook and push notification URLs (tests, development). */
  webhooksAllowPrivateNetworks: boolean;
  /** Event delivery (docs/api.md §8). */
  events: {
    /** `inline`: this process runs a dispatcher; `off`: only `npm run worker` processes deliver. */
    dispatcher: 'inline' | 'off';
    /** How often an idle dispatcher looks for due deliveries (it also wakes on this process's commits). */
    pollIntervalMs: number;
    /** Deliveries claimed, and sent concurrently, per round. */
    batchSize: number;
    /** The share of a dispatcher's slots one organization (and so one webhook or push config) may hold; a failing webhook a tenth of them. */
    maxSharePercent: number;
    /** A 2xx within this time is success. */
    timeoutMs: number;
    /** Waits before each retry after a failed attempt; past the last one the delivery is failed. */
    retryScheduleMs: number[];
    /** Events older than this are deleted (with their finished deliveries) by the retention pass. */
    retentionDays: number;
  };
  /** Retention (src/retention): what is kept how long, and how the pass that deletes the rest runs. */
  retention: {
    /** How often a process that runs a dispatcher (the server with EVENTS_DISPATCHER=inline, or a worker) runs the pass. */
    intervalMs: number;
    /** Rows one delete statement removes at most; a kind is deleted in such batches while they come back full. */
    batchSize: number;
    /** Admission decisions (denials) older than this are deleted. */
    decisionsDays: number;
    /** Audit events older than this are deleted (by the pruner the audit module registers). */
    auditDays: number;
    /** An active key's `api_key.expiring` event is written this many days before it expires (once per key, by the pass). */
    keyExpiryNoticeDays: number;
  };
  /** When the directory shows an agent unavailable (docs/api.md §4, "Availability"). */
  availability: {
    /** An upstream whose last this many forward attempts failed. */
    failedForwards: number;
    /** A worker with a task it has not answered for this long. */
    unansweredMs: number;
  };
  /** The forwarder to upstream agents (docs/api.md §14). */
  upstream: {
    /** The upstream's response headers must arrive within this time. */
    timeoutMs: number;
    /** The most one upstream response (a whole stream included) may hold. */
    maxResponseBytes: number;
    /** Waits before each retry while the upstream is unreachable; past the last one the task fails. */
    retryScheduleMs: number[];
    /** How long a forwarder's claim holds a forward (renewed while it runs); a dead forwarder's claims fall due after it. */
    leaseMs: number;
    /** The share of a forwarder's slots one organization (the requester's), and one upstream, may hold. */
    maxSharePercent: number;
    /** The longest a forward may take, from when it was queued; past it the task fails. */
    forwardMaxMs: number;
    /** The longest an upstream may go without answering anything (an event of its stream, a response); past it the task fails. */
    idleTimeoutMs: number;
    /** The first wait before an upstream task is read again (non-streaming upstreams); each wait is 1.5 times the one before… */
    pollIntervalMs: number;
    /** …up to this. */
    pollMaxIntervalMs: number;
  };
  /** OpenTelemetry tracing (src/tracing): off — nothing started, nothing exported — without an endpoint. */
  tracing: {
    /** OTEL_EXPORTER_OTLP_ENDPOINT: the OTLP/HTTP base URL (traces go to `<endpoint>/v1/traces`); null: tracing off. */
    endpoint: string | null;
    /** OTEL_SERVICE_NAME: the `service.name` of every span. */
    serviceName: string;
  };
}

/** `CONSOLE_OIDC_*`: the OpenID Connect provider people sign in to the Console with. */
export interface ConsoleOidcConfig {
  /** The issuer exactly as the provider's ID tokens name it; its discovery document is under it. */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** What the sign-in button calls the provider ("Sign in with …"). */
  providerName: string;
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

function str(env: Env, name: string, fallback: string): string {
  const raw = env[name];
  return raw === undefined || raw === '' ? fallback : raw;
}

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') {
    return fallback;
  }
  if (!/^\d+$/.test(raw)) {
    throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  }
  const value = Number(raw);
  if (value < min || value > max) {
    throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  }
  return value;
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') {
    return fallback;
  }
  if (['true', '1', 'yes'].includes(raw.toLowerCase())) {
    return true;
  }
  if (['false', '0', 'no'].includes(raw.toLowerCase())) {
    return false;
  }
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = str(env, name, fallback);
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
  }
  return raw as T;
}

function durations(env: Env, name: string, fallback: number[]): number[] {
  const raw = env[name];
  if (raw === undefined || raw === '') {
    return fallback;
  }
  const parts = raw.split(',').map((part) => part.trim());
  if (parts.length > 20 || !parts.every((part) => /^\d{1,10}$/.test(part))) {
    throw new ConfigError(
      `${name} must be a comma-separated list of at most 20 durations in milliseconds, got "${raw}"`,
    );
  }
  return parts.map(Number);
}

function url(env: Env, name: string, fallback: string | null, protocols: string[]): string | null {
  const raw = env[name];
  if (raw === undefined || raw === '') {
    return fallback;
  }
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be a URL`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(`${name} must use ${protocols.join(' or ')}`);
  }
  return raw;
}

/** `METRICS_PORT`: a port, or `off`. */
function metricsPort(env: Env): number | null {
  return env.METRICS_PORT?.trim().toLowerCase() === 'off' ? null : int(env, 'METRICS_PORT', 9464, 0, 65535);
}

/** `GRPC_PORT`: a port, or `off`. */
function grpcPort(env: Env): number | null {
  return env.GRPC_PORT?.trim().toLowerCase() === 'off' ? null : int(env, 'GRPC_PORT', 50051, 0, 65535);
}

/** `DATABASE_PIPELINE`: `on` (the default) or `off` (AppConfig.databasePipeline). */
export function databasePipeline(env: Env = process.env): boolean {
  return oneOf(env, 'DATABASE_PIPELINE', ['on', 'off'] as const, 'on') === 'on';
}

export function loadConfig(env: Env = process.env): AppConfig {
  const port = int(env, 'PORT', 3000, 0, 65535);
  const publicBaseUrl = url(env, 'PUBLIC_BASE_URL', `http://localhost:${port}`, ['http:', 'https:'])!.replace(
    /\/+$/,
    '',
  );
  const grpc = grpcPort(env);
  return {
    port,
    host: str(env, 'HOST', '0.0.0.0'),
    publicBaseUrl,
    cardSigningKeyFile: cardSigningKeyFile(env),
    databaseUrl: url(env, 'DATABASE_URL', null, ['postgres:', 'postgresql:']),
    databasePipeline: databasePipeline(env),
    expressServerAdapter: oneOf(env, 'EXPRESS_SERVER_ADAPTER', ['on', 'off'] as const, 'on') === 'on',
    dataDir: resolve(str(env, 'DATA_DIR', './data')),
    // dist/console-app, from src/config (ts-node) as from dist/config (the build).
    consoleDir: resolve(str(env, 'CONSOLE_DIR', resolve(__dirname, '../../dist/console-app'))),
    migrationsRun: bool(env, 'MIGRATIONS_RUN', true),
    logLevel: oneOf(env, 'LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, 'info'),
    logFormat: oneOf(env, 'LOG_FORMAT', ['json', 'pretty', 'auto'] as const, 'auto'),
    consoleSignup: oneOf(env, 'CONSOLE_SIGNUP', ['open', 'closed'] as const, 'open'),
    consoleOidc: consoleOidc(env),
    sessionTtlHours: int(env, 'SESSION_TTL_HOURS', 12, 1, 24 * 30),
    oauthTokenTtlSeconds: int(env, 'OAUTH_TOKEN_TTL_SECONDS', 600, 60, 24 * 3600),
    claimCodeTtlHours: int(env, 'CLAIM_CODE_TTL_HOURS', 72, 1, 24 * 30),
    approvals: {
      ttlHours: int(env, 'APPROVAL_TTL_HOURS', 72, 1, 24 * 30),
      maxPending: int(env, 'APPROVAL_MAX_PENDING', 1000, 1, 1_000_000),
    },
    console: {
      inviteTtlHours: int(env, 'CONSOLE_INVITE_TTL_HOURS', 24 * 7, 1, 24 * 30),
      maxMembers: int(env, 'CONSOLE_MAX_MEMBERS', 100, 1, 10_000),
      maxOpenInvites: int(env, 'CONSOLE_MAX_OPEN_INVITES', 100, 1, 10_000),
    },
    bcryptCost: int(env, 'BCRYPT_COST', 12, 12, 15),
    keyUsageFlushMs: int(env, 'KEY_USAGE_FLUSH_MS', 10_000, 10, 600_000),
    bodyLimitBytes: int(env, 'BODY_LIMIT_BYTES', 256 * 1024, 1024, 64 * 1024 * 1024),
    protocolBodyLimitBytes: int(env, 'PROTOCOL_BODY_LIMIT_BYTES', 1024 * 1024, 1024, 64 * 1024 * 1024),
    loginFailureLimit: int(env, 'LOGIN_FAILURE_LIMIT', 10, 1, 10_000),
    loginFailureWindowSeconds: int(env, 'LOGIN_FAILURE_WINDOW_SECONDS', 15 * 60, 1, 24 * 3600),
    trustProxy: bool(env, 'TRUST_PROXY', false),
    shutdownGraceMs: int(env, 'SHUTDOWN_GRACE_MS', 10_000, 0, 600_000),
    redisUrl: url(env, 'REDIS_URL', null, ['redis:', 'rediss:']),
    redisKeyPrefix: str(env, 'REDIS_KEY_PREFIX', 'a2a:'),
    rateLimits: {
      protocolPerMinute: int(env, 'RATE_LIMIT_PROTOCOL_PER_MINUTE', 1200, 1, 10_000_000),
      restPerMinute: int(env, 'RATE_LIMIT_REST_PER_MINUTE', 600, 1, 10_000_000),
      publicPerMinute: int(env, 'RATE_LIMIT_PUBLIC_PER_MINUTE', 300, 1, 10_000_000),
      signupsPerHour: int(env, 'RATE_LIMIT_SIGNUPS_PER_HOUR', 10, 1, 10_000_000),
      loginAttemptsPerMinute: int(env, 'RATE_LIMIT_LOGIN_ATTEMPTS_PER_MINUTE', 30, 1, 10_000_000),
      webhookTestsPerMinute: int(env, 'RATE_LIMIT_WEBHOOK_TESTS_PER_MINUTE', 10, 1, 10_000_000),
      upstreamTestsPerMinute: int(env, 'RATE_LIMIT_UPSTREAM_TESTS_PER_MINUTE', 10, 1, 10_000_000),
    },
    protocolBlockingTimeoutMs: int(env, 'PROTOCOL_BLOCKING_TIMEOUT_MS', 30_000, 0, 120_000),
    protocolMaxOpenCallsPerKey: int(env, 'PROTOCOL_MAX_OPEN_CALLS_PER_KEY', 20, 1, 10_000),
    ledgerMaxMessagesPerTask: int(env, 'LEDGER_MAX_MESSAGES_PER_TASK', 1_000, 1, 1_000_000),
    ledgerMaxArtifactBytesPerTask: int(
      env,
      'LEDGER_MAX_ARTIFACT_BYTES_PER_TASK',
      8 * 1024 * 1024,
      1024,
      1024 * 1024 * 1024,
    ),
    ledgerMaxHistory: int(env, 'LEDGER_MAX_HISTORY', 100, 1, 10_000),
    // smallint column; a few levels suffice for real delegation, the limit stops runaway loops of agents.
    ledgerMaxTreeDepth: int(env, 'LEDGER_MAX_TREE_DEPTH', 16, 1, 1_000),
    sseKeepaliveMs: int(env, 'SSE_KEEPALIVE_MS', 15_000, 10, 15_000),
    sseMaxDurationMs: int(env, 'SSE_MAX_DURATION_MS', 15 * 60_000, 1_000, 24 * 3600_000),
    webhooksAllowPrivateNetworks: bool(env, 'WEBHOOKS_ALLOW_PRIVATE_NETWORKS', false),
    grpcPort: grpc,
    grpcHost: str(env, 'GRPC_HOST', str(env, 'HOST', '0.0.0.0')),
    grpcPublicAddress:
      grpc === null ? null : str(env, 'GRPC_PUBLIC_ADDRESS', `${new URL(publicBaseUrl).hostname}:${grpc}`),
    metricsPort: metricsPort(env),
    metricsHost: str(env, 'METRICS_HOST', '127.0.0.1'),
    events: {
      dispatcher: oneOf(env, 'EVENTS_DISPATCHER', ['inline', 'off'] as const, 'inline'),
      pollIntervalMs: int(env, 'EVENTS_POLL_INTERVAL_MS', 1000, 10, 60_000),
      batchSize: int(env, 'EVENTS_BATCH_SIZE', 50, 1, 500),
      maxSharePercent: int(env, 'EVENTS_MAX_SHARE_PERCENT', 50, 1, 100),
      timeoutMs: int(env, 'WEBHOOK_TIMEOUT_MS', 15_000, 100, 60_000),
      // 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, then failed.
      retryScheduleMs: durations(
        env,
        'WEBHOOK_RETRY_SCHEDULE_MS',
        [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000],
      ),
      retentionDays: int(env, 'EVENTS_RETENTION_DAYS', 30, 1, 3650),
    },
    retention: {
      // EVENTS_PRUNE_INTERVAL_MS is the earlier name, still read.
      intervalMs: int(
        env,
        'RETENTION_INTERVAL_MS',
        int(env, 'EVENTS_PRUNE_INTERVAL_MS', 3_600_000, 10, 86_400_000),
        10,
        86_400_000,
      ),
      batchSize: int(env, 'RETENTION_BATCH_SIZE', 500, 1, 10_000),
      decisionsDays: int(env, 'DECISIONS_RETENTION_DAYS', 90, 1, 3650),
      auditDays: int(env, 'AUDIT_RETENTION_DAYS', 365, 1, 3650),
      keyExpiryNoticeDays: int(env, 'API_KEY_EXPIRY_NOTICE_DAYS', 7, 1, 365),
    },
    availability: {
      failedForwards: int(env, 'DIRECTORY_UNAVAILABLE_AFTER_FAILED_FORWARDS', 3, 1, 1000),
      unansweredMs: int(env, 'DIRECTORY_UNAVAILABLE_AFTER_UNANSWERED_S', 900, 1, 30 * 86_400) * 1000,
    },
    upstream: {
      timeoutMs: int(env, 'UPSTREAM_TIMEOUT_MS', 15_000, 100, 120_000),
      maxResponseBytes: int(env, 'UPSTREAM_MAX_RESPONSE_BYTES', 16 * 1024 * 1024, 1024, 256 * 1024 * 1024),
      retryScheduleMs: durations(
        env,
        'UPSTREAM_RETRY_SCHEDULE_MS',
        [1_000, 5_000, 30_000, 120_000, 600_000, 1_800_000],
      ),
      leaseMs: int(env, 'UPSTREAM_LEASE_MS', 60_000, 1_000, 3_600_000),
      maxSharePercent: int(env, 'UPSTREAM_MAX_SHARE_PERCENT', 50, 1, 100),
      forwardMaxMs: int(env, 'UPSTREAM_FORWARD_MAX_MS', 3_600_000, 1_000, 7 * 86_400_000),
      idleTimeoutMs: int(env, 'UPSTREAM_IDLE_TIMEOUT_MS', 300_000, 500, 86_400_000),
      pollIntervalMs: int(env, 'UPSTREAM_POLL_INTERVAL_MS', 500, 10, 60_000),
      pollMaxIntervalMs: int(env, 'UPSTREAM_POLL_MAX_INTERVAL_MS', 10_000, 10, 600_000),
    },
    tracing: {
      endpoint: url(env, 'OTEL_EXPORTER_OTLP_ENDPOINT', null, ['http:', 'https:']),
      serviceName: str(env, 'OTEL_SERVICE_NAME', 'a2a-service'),
    },
  };
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * `CONSOLE_OIDC_ISSUER`, `_CLIENT_ID`, `_CLIENT_SECRET`: all three or none. The issuer is
 * https (http only on a loopback host, for development and tests), without a query or
 * fragment, as its ID tokens' `iss` names it.
 */
function consoleOidc(env: Env): ConsoleOidcConfig | null {
  const names = ['CONSOLE_OIDC_ISSUER', 'CONSOLE_OIDC_CLIENT_ID', 'CONSOLE_OIDC_CLIENT_SECRET'] as const;
  const set = names.filter((name) => (env[name] ?? '').trim() !== '');
  if (set.length === 0) {
    return null;
  }
  if (set.length < names.length) {
    const missing = names.filter((name) => !set.includes(name));
    throw new ConfigError(`${missing.join(' and ')} must be set with ${set.join(' and ')} (all three or none)`);
  }
  const issuer = env.CONSOLE_OIDC_ISSUER!.trim();
  let parsed: URL;
  try {
    parsed = new URL(issuer);
  } catch {
    throw new ConfigError('CONSOLE_OIDC_ISSUER must be a URL');
  }
  if (parsed.protocol !== 'https:' && !(parsed.protocol === 'http:' && LOOPBACK_HOSTS.has(parsed.hostname))) {
    throw new ConfigError('CONSOLE_OIDC_ISSUER must use https (http only on localhost)');
  }
  if (parsed.search || parsed.hash || parsed.username || parsed.password) {
    throw new ConfigError('CONSOLE_OIDC_ISSUER must have no query, fragment or credentials');
  }
  const providerName = str(env, 'CONSOLE_OIDC_PROVIDER_NAME', parsed.hostname).trim();
  if (providerName.length > 60) {
    throw new ConfigError('CONSOLE_OIDC_PROVIDER_NAME must be at most 60 characters');
  }
  return {
    issuer,
    clientId: env.CONSOLE_OIDC_CLIENT_ID!.trim(),
    clientSecret: env.CONSOLE_OIDC_CLIENT_SECRET!,
    providerName,
  };
}

/** CARD_SIGNING_KEY_FILE: absent, or a readable PEM private key of a kind that signs Agent Cards. */
function cardSigningKeyFile(env: Env): string | null {
  const raw = env.CARD_SIGNING_KEY_FILE?.trim();
  if (!raw) {
    return null;
  }
  const path = resolve(raw);
  readCardSigningKey(path);
  return path;
}

/** The Agent Card signing key in `path`: P-256 (ES256) or Ed25519 (EdDSA); anything else is a ConfigError. */
export function readCardSigningKey(path: string): { alg: 'ES256' | 'EdDSA'; key: KeyObject } {
  let key: KeyObject;
  try {
    key = createPrivateKey(readFileSync(path, 'utf8'));
  } catch {
    throw new ConfigError('CARD_SIGNING_KEY_FILE must name a readable PEM private key');
  }
  if (key.asymmetricKeyType === 'ed25519') {
    return { alg: 'EdDSA', key };
  }
  if (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1') {
    return { alg: 'ES256', key };
  }
  throw new ConfigError('CARD_SIGNING_KEY_FILE must hold a P-256 (EC) or Ed25519 private key');
}

/** For entry points: the configuration, or exit with one line naming what is wrong. */
export function loadConfigOrExit(env: Env = process.env): AppConfig {
  try {
    return loadConfig(env);
  } catch (error) {
    if (!(error instanceof ConfigError)) {
      throw error;
    }
    process.stderr.write(`configuration error: ${error.message}\n`);
    process.exit(1);
  }
}

/** Injection token for the configuration object. */
export const APP_CONFIG = Symbol('APP_CONFIG');

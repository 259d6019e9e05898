import type { AppConfig } from '../config/config';

/** Where the database is, for people: the embedded path, or PostgreSQL's host, port and database — never a password. */
export function describeDatabase(config: Pick<AppConfig, 'databaseUrl' | 'dataDir'>): string {
  if (!config.databaseUrl) {
    return `embedded (${config.dataDir})`;
  }
  const { host, port, database } = target(config.databaseUrl);
  return `PostgreSQL ${host}:${port}/${database}`;
}

function target(databaseUrl: string): { host: string; port: string; database: string; user: string } {
  const url = new URL(databaseUrl);
  return {
    host: url.hostname || 'localhost',
    port: url.port || '5432',
    database: decodeURIComponent(url.pathname.replace(/^\//, '')) || decodeURIComponent(url.username) || 'postgres',
    user: decodeURIComponent(url.username) || 'postgres',
  };
}

const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNRESET',
]);

/**
 * One line explaining why the configured PostgreSQL could not be used at start, or null
 * when the error is not about connecting. Names host, port, database and user; never
 * the password.
 */
export function explainConnectionError(error: unknown, config: Pick<AppConfig, 'databaseUrl'>): string | null {
  if (!config.databaseUrl || !(error instanceof Error)) {
    return null;
  }
  const code = (error as { code?: unknown }).code;
  const { host, port, database, user } = target(config.databaseUrl);
  if (code === '3D000') {
    return `database ${database} does not exist on ${host}:${port} — create it with: createdb -h ${host} -p ${port} -U ${user} ${database}`;
  }
  if (code === '28P01' || code === '28000') {
    return `PostgreSQL at ${host}:${port} refused user ${user} (${code}) — check the user and password in DATABASE_URL`;
  }
  if (typeof code === 'string' && UNREACHABLE.has(code)) {
    return `cannot reach PostgreSQL at ${host}:${port} (${code}) — is it running, and is DATABASE_URL right?`;
  }
  return null;
}

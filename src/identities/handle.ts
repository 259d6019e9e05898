/**
 * Agent handles (docs/api.md §3): 3–63 characters of `a-z 0-9 -`, starting and ending
 * with a letter or digit, globally unique and never reused. The same pattern is the
 * `ck_identities_handle` constraint of the database.
 */
export const HANDLE_PATTERN = /^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/;

/**
 * Words a handle may not be: they name routes beside `/a2a/{handle}` and
 * `/api/v1/identities/{handle}`, or would pass for the service itself.
 */
export const RESERVED_HANDLES: ReadonlySet<string> = new Set([
  'a2a',
  'abuse',
  'admin',
  'administrator',
  'agent',
  'agent-card',
  'agent-signup',
  'agents',
  'anonymous',
  'api',
  'api-keys',
  'assets',
  'auth',
  'card',
  'claim',
  'console',
  'contact-rules',
  'contexts',
  'directory',
  'docs',
  'healthz',
  'help',
  'identities',
  'identity',
  'login',
  'logout',
  'null',
  'openapi',
  'organization',
  'organizations',
  'postmaster',
  'readyz',
  'root',
  'security',
  'self',
  'service',
  'settings',
  'signup',
  'static',
  'status',
  'support',
  'system',
  'tasks',
  'undefined',
  'webhooks',
  'well-known',
  'www',
]);

/** Why a handle cannot be registered, or null when it can. */
export function handleProblem(handle: string): string | null {
  if (handle.length < 3 || handle.length > 63) {
    return 'agent_handle must be 3 to 63 characters long';
  }
  if (!HANDLE_PATTERN.test(handle)) {
    return 'agent_handle may contain only a-z, 0-9 and -, and must start and end with a letter or digit';
  }
  if (RESERVED_HANDLES.has(handle)) {
    return `agent_handle "${handle}" is reserved`;
  }
  return null;
}

/** Whether a path segment can name an identity at all (anything else is a 404). */
export function isHandle(value: string): boolean {
  return HANDLE_PATTERN.test(value);
}

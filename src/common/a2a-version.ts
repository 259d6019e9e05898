/**
 * The A2A generation a version names, `major.minor` with an optional patch number that
 * is ignored (A2A v1.0 §3.6), or null for a version this service does not speak.
 */
export function spokenVersion(version: string): '0.3' | '1.0' | null {
  const match = /^(\d+\.\d+)(?:\.\d+)?$/.exec(version.trim());
  return match?.[1] === '0.3' || match?.[1] === '1.0' ? match[1] : null;
}

/** A JSON object (not null, not an array): the one check for untyped input read as a record. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

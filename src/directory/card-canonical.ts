/**
 * The bytes an Agent Card signature covers (A2A v1.0 §8.4.1, as `@a2a-js/sdk`'s
 * `canonicalizeAgentCard` implements it): the card without `signatures`, with every
 * empty value left out (empty strings, lists and objects, null — the proto3 JSON
 * rule that fields holding their default are omitted), serialized with the JSON
 * Canonicalization Scheme of RFC 8785.
 *
 * Cards hold strings, booleans, lists and objects only (no numbers), so RFC 8785
 * reduces to: object members sorted by their UTF-16 code units, no whitespace, and
 * strings as JSON.stringify writes them (which is RFC 8785's string form).
 */
export function canonicalCardPayload(card: object): string {
  const { signatures: _signatures, ...unsigned } = card as { signatures?: unknown };
  return jcs(withoutEmpty(unsigned) ?? {});
}

function withoutEmpty(value: unknown): unknown {
  if (value === '' || value === null || value === undefined) {
    return undefined;
  }
  if (Array.isArray(value)) {
    const items = value.map(withoutEmpty).filter((item) => item !== undefined);
    return items.length > 0 ? items : undefined;
  }
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .map(([key, member]) => [key, withoutEmpty(member)] as const)
      .filter(([, member]) => member !== undefined);
    return entries.length > 0 ? Object.fromEntries(entries) : undefined;
  }
  return value;
}

function jcs(value: unknown): string {
  if (Array.isArray(value)) {
    return `[${value.map(jcs).join(',')}]`;
  }
  if (value !== null && typeof value === 'object') {
    // Default sort compares UTF-16 code units, as RFC 8785 §3.2.3 requires.
    const keys = Object.keys(value).sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${jcs((value as Record<string, unknown>)[key])}`).join(',')}}`;
  }
  if (typeof value === 'number' && !Number.isFinite(value)) {
    throw new Error('a card holds no non-finite numbers');
  }
  return JSON.stringify(value);
}

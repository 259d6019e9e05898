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
  return canonical(unsigned) ?? '{}';
}

/** RFC 8785's form of `value` without its empty values, in one pass; undefined when it is empty itself. */
function canonical(value: unknown): string | undefined {
  if (value === '' || value === null || value === undefined) {
    return undefined;
  }
  if (Array.isArray(value)) {
    const items: string[] = [];
    for (const item of value) {
      const form = canonical(item);
      if (form !== undefined) {
        items.push(form);
      }
    }
    return items.length > 0 ? `[${items.join(',')}]` : undefined;
  }
  if (typeof value === 'object') {
    const members: string[] = [];
    // Default sort compares UTF-16 code units, as RFC 8785 §3.2.3 requires.
    for (const key of Object.keys(value).sort()) {
      const form = canonical((value as Record<string, unknown>)[key]);
      if (form !== undefined) {
        members.push(`${JSON.stringify(key)}:${form}`);
      }
    }
    return members.length > 0 ? `{${members.join(',')}}` : undefined;
  }
  if (typeof value === 'number' && !Number.isFinite(value)) {
    throw new Error('a card holds no non-finite numbers');
  }
  return JSON.stringify(value);
}

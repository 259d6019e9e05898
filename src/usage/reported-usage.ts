import { isObject } from '../common/json-object';
import { AMOUNT_PATTERN, CURRENCY_PATTERN } from '../common/money';
import type { ReportedUsage } from './usage.repository';

/** The most tokens one report may carry (a bound against nonsense, not a price). */
export const MAX_REPORTED_TOKENS = 1_000_000_000_000;

/** The metadata key an upstream agent's answer carries its usage under (docs/api.md §18). */
export const USAGE_METADATA_KEY = 'usage';

/**
 * The usage an upstream agent reported in an answer's metadata (docs/api.md §18):
 * `metadata.usage` with the REST reply's shape — `input_tokens`, `output_tokens`
 * (whole numbers, 0 or more), `cost: {amount: decimal string, currency: ISO 4217}`.
 * An answer cannot be refused for it, so a malformed report is left out whole (null),
 * as is one that reports nothing.
 */
export function usageInMetadata(metadata: unknown): ReportedUsage | null {
  if (!isObject(metadata) || !isObject(metadata[USAGE_METADATA_KEY])) {
    return null;
  }
  const usage = metadata[USAGE_METADATA_KEY];
  const tokens = (value: unknown): number | null | undefined =>
    value === undefined
      ? 0
      : Number.isInteger(value) && (value as number) >= 0 && (value as number) <= MAX_REPORTED_TOKENS
        ? (value as number)
        : null;
  const inputTokens = tokens(usage.input_tokens);
  const outputTokens = tokens(usage.output_tokens);
  if (inputTokens === null || outputTokens === null) {
    return null;
  }
  let cost: ReportedUsage['cost'] = null;
  if (usage.cost !== undefined) {
    const { amount, currency } = isObject(usage.cost) ? usage.cost : {};
    if (
      typeof amount !== 'string' ||
      typeof currency !== 'string' ||
      !AMOUNT_PATTERN.test(amount) ||
      !CURRENCY_PATTERN.test(currency)
    ) {
      return null;
    }
    cost = { amount, currency };
  }
  if (inputTokens === 0 && outputTokens === 0 && cost === null) {
    return null;
  }
  return { inputTokens: inputTokens!, outputTokens: outputTokens!, cost };
}

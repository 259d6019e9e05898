import type { KeyObject } from 'node:crypto';
import { calculateJwkThumbprint, flattenedVerify, type JWK } from 'jose';
import { checkJwkSet, JWS_ALGORITHMS, type JwsAlgorithm } from '../common/jwk';
import { canonicalCardPayload } from '../directory/card-canonical';

/**
 * Verifying an upstream's Agent Card (docs/api.md §14, "Verified upstream cards";
 * A2A v1.0 §8.4): each JWS in the card's `signatures` over the card's canonical form
 * (the one the service signs its own cards over, card-canonical.ts), against the keys
 * the organization pinned for the upstream — only those. A `jku`, `jwk`, `x5u` or
 * `x5c` that a signature names is never followed: a card cannot vouch for itself.
 */
export type CardVerificationStatus = 'verified' | 'unsigned' | 'failed';

export interface CardVerification {
  status: CardVerificationStatus;
  /** The pinned key that verified it (verified only). */
  kid: string | null;
  /** Why it failed (failed only). */
  error: string | null;
}

/** A pinned public key, with the kid it is known by (its own, or its RFC 7638 thumbprint). */
export interface PinnedKey {
  kid: string;
  jwk: JWK;
  key: KeyObject;
}

/** Algorithms a card signature may use: every asymmetric one (never `none`, never HMAC), more than a token's. */
const CARD_ALGORITHMS: readonly JwsAlgorithm[] = JWS_ALGORITHMS;

/**
 * A JWK Set of public keys, as pinned (`trusted_keys`, or read from `trusted_jwks_uri`):
 * checkJwkSet's rules for every card algorithm, a key without `kid` known by its RFC 7638
 * thumbprint; throws `invalid_trusted_keys` (400) for anything else — a private key above all.
 */
export async function parseTrustedKeys(value: unknown): Promise<PinnedKey[]> {
  const checked = checkJwkSet(value, {
    algorithms: CARD_ALGORITHMS,
    kidRequired: false,
    field: 'trusted_keys',
    code: 'invalid_trusted_keys',
  });
  return Promise.all(
    checked.map(async ({ jwk, key }) => ({
      kid: jwk.kid ?? (await calculateJwkThumbprint(jwk as JWK)),
      jwk: jwk as JWK,
      key,
    })),
  );
}

/** The card's verification against the pinned keys. `card` is the JSON the upstream served, as served. */
export async function verifyCard(card: unknown, pinned: readonly PinnedKey[]): Promise<CardVerification> {
  const signatures = signaturesOf(card);
  if (!signatures || signatures.length === 0) {
    return { status: 'unsigned', kid: null, error: null };
  }
  if (pinned.length === 0) {
    return failed('the card is signed, but no keys are pinned for this upstream');
  }
  const payload = Buffer.from(canonicalCardPayload(card as object)).toString('base64url');
  let reason = 'no signature verifies with a pinned key';
  for (const entry of signatures) {
    const { protected: protectedHeader, signature } = (entry ?? {}) as { protected?: unknown; signature?: unknown };
    if (typeof protectedHeader !== 'string' || typeof signature !== 'string') {
      reason = 'a signature is malformed';
      continue;
    }
    const header = headerOf(protectedHeader);
    if (!header) {
      reason = 'a signature header is malformed';
      continue;
    }
    if (typeof header.alg !== 'string' || !(CARD_ALGORITHMS as readonly string[]).includes(header.alg)) {
      reason = `a signature uses an algorithm that is not accepted (${String(header.alg).slice(0, 20)})`;
      continue;
    }
    // The pinned key the signature names; without a kid, each pinned key in turn.
    const candidates = typeof header.kid === 'string' ? pinned.filter((key) => key.kid === header.kid) : pinned;
    for (const key of candidates) {
      try {
        // jose refuses a key that does not fit the algorithm.
        await flattenedVerify({ payload, protected: protectedHeader, signature }, key.key, {
          algorithms: [header.alg],
        });
        return { status: 'verified', kid: key.kid, error: null };
      } catch {
        // another key, or another signature
      }
    }
  }
  return failed(reason);
}

/** The key ids the card's signatures name (in their protected headers). */
export function keyIdsNamed(card: unknown): string[] {
  const signatures = signaturesOf(card) ?? [];
  return signatures.flatMap((entry) => {
    const protectedHeader = (entry as { protected?: unknown } | null)?.protected;
    const kid = typeof protectedHeader === 'string' ? headerOf(protectedHeader)?.kid : undefined;
    return typeof kid === 'string' ? [kid] : [];
  });
}

function signaturesOf(card: unknown): unknown[] | null {
  const signatures = (card as { signatures?: unknown } | null)?.signatures;
  return Array.isArray(signatures) ? (signatures as unknown[]) : null;
}

/** A protected header's JSON; null when it is not JSON, or is `null`. */
function headerOf(protectedHeader: string): { alg?: unknown; kid?: unknown } | null {
  try {
    return JSON.parse(Buffer.from(protectedHeader, 'base64url').toString('utf8')) as {
      alg?: unknown;
      kid?: unknown;
    } | null;
  } catch {
    return null;
  }
}

const failed = (error: string): CardVerification => ({ status: 'failed', kid: null, error });

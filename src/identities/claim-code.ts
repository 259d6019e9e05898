import { createHash, randomBytes } from 'node:crypto';

/**
 * Claim codes: 256 bits of CSPRNG randomness, shown once in the agent signup
 * response; only their SHA-256 is stored (identities.claim_code_hash).
 */
const PREFIX = 'a2a_clm_';

export function generateClaimCode(): string {
  return PREFIX + randomBytes(32).toString('base64url');
}

export function hashClaimCode(code: string): Buffer {
  return createHash('sha256').update(code).digest();
}

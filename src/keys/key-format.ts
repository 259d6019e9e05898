import { hash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

/**
 * API key format (docs/api.md §2): `a2a_adm_` or `a2a_agt_`, 32 base62 characters of
 * CSPRNG randomness, then 6 base62 characters of the CRC32 of everything before.
 * The checksum lets the guard reject typos and forgeries before any database work.
 */
export type KeyScope = 'admin' | 'agent';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const PREFIX: Record<KeyScope, string> = { admin: 'a2a_adm_', agent: 'a2a_agt_' };
const RANDOM_LENGTH = 32;
const CHECKSUM_LENGTH = 6;
const KEY_PATTERN = /^a2a_(adm|agt)_[0-9A-Za-z]{38}$/;
/** Characters of the key shown in metadata: the prefix plus four random ones. */
export const DISPLAY_PREFIX_LENGTH = 12;

function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // 248 = 62 * 4: rejecting higher bytes keeps every character equally likely.
      if (byte < 248) {
        out += BASE62[byte % 62];
      }
      if (out.length === length) {
        break;
      }
    }
  }
  return out;
}

export function base62Checksum(text: string): string {
  let value = crc32(text);
  let out = '';
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = BASE62[value % 62] + out;
    value = Math.floor(value / 62);
  }
  return out;
}

export function generateApiKey(scope: KeyScope): string {
  const body = PREFIX[scope] + randomBase62(RANDOM_LENGTH);
  return body + base62Checksum(body);
}

/** The scope a well-formed key claims, or null when its shape or checksum is wrong. */
export function parseApiKey(raw: string): KeyScope | null {
  if (!KEY_PATTERN.test(raw)) {
    return null;
  }
  const body = raw.slice(0, raw.length - CHECKSUM_LENGTH);
  if (base62Checksum(body) !== raw.slice(-CHECKSUM_LENGTH)) {
    return null;
  }
  return raw.startsWith(PREFIX.admin) ? 'admin' : 'agent';
}

/** SHA-256 of the key (one-shot `crypto.hash`: every authenticated request runs it). */
export function hashApiKey(raw: string): Buffer {
  return hash('sha256', raw, 'buffer');
}

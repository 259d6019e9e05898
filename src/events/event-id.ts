import { pooledRandomBytes } from '../database/random-bytes';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * `evt_` and a ULID: 10 characters of millisecond time, then 16 of CSPRNG randomness
 * (Crockford base32), so ids sort by creation time and never collide in practice.
 */
export function newEventId(now = Date.now()): string {
  let time = '';
  for (let t = now, i = 0; i < 10; i++, t = Math.floor(t / 32)) {
    time = CROCKFORD[t % 32] + time;
  }
  let random = '';
  for (const byte of pooledRandomBytes(16)) {
    random += CROCKFORD[byte & 31];
  }
  return `evt_${time}${random}`;
}

import { crc32 } from 'node:zlib';
import { base62Checksum, generateApiKey, hashApiKey, parseApiKey } from './key-format';

describe('API key format', () => {
  it('generates keys with the scope prefix, 32 random and 6 checksum characters', () => {
    const admin = generateApiKey('admin');
    const agent = generateApiKey('agent');
    expect(admin).toMatch(/^a2a_adm_[0-9A-Za-z]{38}$/);
    expect(agent).toMatch(/^a2a_agt_[0-9A-Za-z]{38}$/);
    expect(parseApiKey(admin)).toBe('admin');
    expect(parseApiKey(agent)).toBe('agent');
  });

  it('never repeats a key', () => {
    const keys = new Set(Array.from({ length: 2000 }, () => generateApiKey('agent')));
    expect(keys.size).toBe(2000);
  });

  it('uses every base62 character in the random part', () => {
    const seen = new Set(Array.from({ length: 500 }, () => generateApiKey('agent').slice(8, 40)).join(''));
    expect(seen.size).toBe(62);
  });

  it('encodes the CRC32 of the prefix and random part in base62', () => {
    const key = generateApiKey('agent');
    const body = key.slice(0, 40);
    const checksum = key.slice(40);
    const digits = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
    const decoded = [...checksum].reduce((n, ch) => n * 62 + digits.indexOf(ch), 0);
    expect(decoded).toBe(crc32(body));
    expect(base62Checksum(body)).toBe(checksum);
  });

  it('rejects a key whose checksum does not match', () => {
    const key = generateApiKey('agent');
    const last = key[key.length - 1];
    const tampered = key.slice(0, -1) + (last === 'a' ? 'b' : 'a');
    expect(parseApiKey(tampered)).toBeNull();
  });

  it('rejects a key whose random part was altered', () => {
    const key = generateApiKey('admin');
    const altered = key.slice(0, 10) + (key[10] === 'x' ? 'y' : 'x') + key.slice(11);
    expect(parseApiKey(altered)).toBeNull();
  });

  it('rejects a key whose prefix was swapped (scope forgery)', () => {
    const agent = generateApiKey('agent');
    expect(parseApiKey(agent.replace('a2a_agt_', 'a2a_adm_'))).toBeNull();
  });

  it.each([
    ['empty', ''],
    ['unknown prefix', 'a2a_xyz_' + 'A'.repeat(38)],
    ['too short', 'a2a_agt_abc'],
    ['too long', generateApiKey('agent') + 'A'],
    ['non-base62 characters', 'a2a_agt_' + '-'.repeat(38)],
    ['whitespace around', ` ${generateApiKey('agent')}`],
  ])('rejects a malformed key (%s)', (_, raw) => {
    expect(parseApiKey(raw)).toBeNull();
  });

  it('hashes with SHA-256', () => {
    const hash = hashApiKey('a2a_agt_example');
    expect(hash).toHaveLength(32);
    expect(hash.equals(hashApiKey('a2a_agt_example'))).toBe(true);
    expect(hash.equals(hashApiKey('a2a_agt_examplf'))).toBe(false);
  });
});

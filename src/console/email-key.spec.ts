import { emailKeyAtMigration } from '../database/migrations/1796439327973-console-email-key';
import { emailKey } from '../common/email-key';

describe('emailKey', () => {
  it.each([
    ['Alice@Example.TEST', 'alice@example.test'],
    // NFD (e + U+0301) and NFC (U+00E9) are one address.
    ['Jose\u0301@example.test', 'jos\u00e9@example.test'],
    ['JOS\u00c9@example.test', 'jos\u00e9@example.test'],
    // The Kelvin sign is K by canonical equivalence.
    ['\u212aate@example.test', 'kate@example.test'],
    // JavaScript lowercases İ to i + U+0307 in every locale: not the address with a plain i.
    ['al\u0130ce@example.test', 'ali\u0307ce@example.test'],
  ])('%j → %j', (email, key) => {
    expect(emailKey(email)).toBe(key);
  });

  it('is idempotent and agrees with the key the migration gave existing users', () => {
    for (const email of ['ALİCE@A.TEST', 'Σίσυφος@example.test', 'Jose\u0301@x.test', 'ǅemal@x.test', '😀@x.test']) {
      expect(emailKey(emailKey(email))).toBe(emailKey(email));
      expect(emailKeyAtMigration(email)).toBe(emailKey(email));
    }
  });
});

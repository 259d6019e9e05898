import { emailDomain, normalizeDomain } from './email-domains';
import { consolePath } from './sso.service';

describe('single sign-on: where a browser lands, and email domains', () => {
  it.each([
    ['/console/', '/console/'],
    ['/console', '/console'],
    ['/console/keys?scope=admin', '/console/keys?scope=admin'],
    ['/console/identities/acme-billing', '/console/identities/acme-billing'],
  ])('lands on the Console page %j', (next, path) => {
    expect(consolePath(next)).toBe(path);
  });

  it.each([
    'https://evil.test/console/',
    '//evil.test/console/',
    '/console//evil.test',
    '/console/\\evil.test',
    '/consolex',
    '/api/v1/console/me',
    '/console/ x',
    '/console/\u00e9',
    `/console/${'a'.repeat(500)}`,
    undefined,
    ['/console/'],
  ])('refuses %j (the Console home instead)', (next) => {
    expect(consolePath(next)).toBeNull();
  });

  it('normalizes domains and reads the domain of an address', () => {
    expect(normalizeDomain(' Acme.Example. ')).toBe('acme.example');
    expect(normalizeDomain('localhost')).toBeNull();
    expect(normalizeDomain('-acme.example')).toBeNull();
    expect(emailDomain('Dana@Sub.Acme.Example')).toBe('sub.acme.example');
    expect(emailDomain('"a@b"@acme.example')).toBe('acme.example');
    expect(emailDomain('no-domain')).toBeNull();
    expect(emailDomain('dana@')).toBeNull();
  });
});

import { ConfigError, loadConfig } from './config';

const OIDC = {
  CONSOLE_OIDC_ISSUER: 'https://id.example.test/realms/acme',
  CONSOLE_OIDC_CLIENT_ID: 'a2a-console',
  CONSOLE_OIDC_CLIENT_SECRET: 'a secret',
};

describe('CONSOLE_OIDC_* (single sign-on to the Console)', () => {
  it('is off when none is set', () => {
    expect(loadConfig({}).consoleOidc).toBeNull();
  });

  it('reads all three, naming the provider by its host unless told', () => {
    expect(loadConfig(OIDC).consoleOidc).toEqual({
      issuer: 'https://id.example.test/realms/acme',
      clientId: 'a2a-console',
      clientSecret: 'a secret',
      providerName: 'id.example.test',
    });
    expect(loadConfig({ ...OIDC, CONSOLE_OIDC_PROVIDER_NAME: 'Acme ID' }).consoleOidc?.providerName).toBe('Acme ID');
  });

  it('refuses one or two of the three, naming what is missing', () => {
    expect(() => loadConfig({ CONSOLE_OIDC_ISSUER: OIDC.CONSOLE_OIDC_ISSUER })).toThrow(
      new ConfigError(
        'CONSOLE_OIDC_CLIENT_ID and CONSOLE_OIDC_CLIENT_SECRET must be set with CONSOLE_OIDC_ISSUER (all three or none)',
      ),
    );
    expect(() => loadConfig({ ...OIDC, CONSOLE_OIDC_CLIENT_SECRET: '' })).toThrow(
      /CONSOLE_OIDC_CLIENT_SECRET must be set/,
    );
  });

  it('wants an https issuer (http only on a loopback host) without query or fragment', () => {
    expect(() => loadConfig({ ...OIDC, CONSOLE_OIDC_ISSUER: 'not a url' })).toThrow(
      'CONSOLE_OIDC_ISSUER must be a URL',
    );
    expect(() => loadConfig({ ...OIDC, CONSOLE_OIDC_ISSUER: 'http://id.example.test' })).toThrow(/must use https/);
    expect(() => loadConfig({ ...OIDC, CONSOLE_OIDC_ISSUER: 'https://id.example.test/?x=1' })).toThrow(/no query/);
    expect(loadConfig({ ...OIDC, CONSOLE_OIDC_ISSUER: 'http://127.0.0.1:4000' }).consoleOidc?.issuer).toBe(
      'http://127.0.0.1:4000',
    );
  });
});

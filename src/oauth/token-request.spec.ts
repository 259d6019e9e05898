import { AppError } from '../common/app-error';
import { readTokenRequest } from './token-request';

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

function refusal(form: unknown, authorization?: string): string {
  try {
    readTokenRequest(form, authorization);
    return 'accepted';
  } catch (error) {
    return (error as AppError).code;
  }
}

describe('readTokenRequest (RFC 6749 §4.4, §2.3.1)', () => {
  it('reads the client from the form or from HTTP Basic (form-encoded there)', () => {
    expect(
      readTokenRequest({ grant_type: 'client_credentials', client_id: 'id', client_secret: 's' }, undefined),
    ).toEqual({ clientId: 'id', clientSecret: 's', scope: undefined, viaBasic: false });
    expect(readTokenRequest({ grant_type: 'client_credentials', scope: 'agent' }, basic('a%3Ab', 'x+y'))).toEqual({
      clientId: 'a:b',
      clientSecret: 'x y',
      scope: 'agent',
      viaBasic: true,
    });
  });

  it('refuses what RFC 6749 §5.2 names', () => {
    expect(refusal({})).toBe('invalid_request');
    expect(refusal({ grant_type: 'password' })).toBe('unsupported_grant_type');
    expect(refusal({ grant_type: ['client_credentials', 'x'] })).toBe('invalid_request');
    expect(refusal({ grant_type: 'client_credentials', client_id: 'id' })).toBe('invalid_client');
    expect(refusal({ grant_type: 'client_credentials' }, 'Bearer x')).toBe('invalid_client');
    expect(refusal({ grant_type: 'client_credentials', client_secret: 's' }, basic('id', 's'))).toBe('invalid_request');
    expect(refusal({ grant_type: 'client_credentials', client_id: 'other' }, basic('id', 's'))).toBe('invalid_request');
  });

  it('challenges a refused client with WWW-Authenticate: Basic, and never repeats the secret', () => {
    try {
      readTokenRequest({ grant_type: 'client_credentials', client_id: 'id' }, undefined);
    } catch (error) {
      expect((error as AppError).extra.headers?.['WWW-Authenticate']).toMatch(/^Basic /);
    }
    try {
      readTokenRequest(
        { grant_type: 'client_credentials', client_id: 'id', client_secret: 'a2a_agt_secret' },
        basic('id', 'x'),
      );
    } catch (error) {
      expect((error as AppError).detail).not.toContain('a2a_agt_secret');
    }
  });
});

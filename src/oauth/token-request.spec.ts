import { AppError } from '../common/app-error';
import { MAX_JWT_LENGTH } from '../common/jwt';
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
    ).toEqual({ grant: 'client_credentials', clientId: 'id', clientSecret: 's', scope: undefined, viaBasic: false });
    expect(readTokenRequest({ grant_type: 'client_credentials', scope: 'agent' }, basic('a%3Ab', 'x+y'))).toEqual({
      grant: 'client_credentials',
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

  it('reads a token exchange (RFC 8693 §2.1): the subject token alone, audiences and resources as given', () => {
    const exchange = {
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      subject_token: 'a.b.c',
      subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
    };
    expect(readTokenRequest(exchange, undefined)).toEqual({
      grant: 'token_exchange',
      subjectToken: 'a.b.c',
      scope: undefined,
      audiences: [],
      resources: [],
    });
    expect(
      readTokenRequest(
        {
          ...exchange,
          requested_token_type: 'urn:ietf:params:oauth:token-type:access_token',
          audience: ['x', 'y'],
          resource: 'r',
          scope: 'agent',
        },
        undefined,
      ),
    ).toMatchObject({ scope: 'agent', audiences: ['x', 'y'], resources: ['r'] });
    expect(refusal({ ...exchange, subject_token: undefined })).toBe('invalid_request');
    expect(refusal({ ...exchange, subject_token: ['a.b.c', 'd.e.f'] })).toBe('invalid_request');
    // No longer than a bearer token may be (MAX_JWT_LENGTH).
    const long = `${'a'.repeat(MAX_JWT_LENGTH - 4)}.b.c`;
    expect(readTokenRequest({ ...exchange, subject_token: long.slice(1) }, undefined)).toMatchObject({
      subjectToken: long.slice(1),
    });
    expect(refusal({ ...exchange, subject_token: `${long}d` })).toBe('invalid_request');
    expect(refusal({ ...exchange, subject_token_type: undefined })).toBe('invalid_request');
    expect(refusal({ ...exchange, subject_token_type: 'urn:ietf:params:oauth:token-type:id_token' })).toBe(
      'invalid_request',
    );
    expect(refusal({ ...exchange, requested_token_type: 'urn:ietf:params:oauth:token-type:refresh_token' })).toBe(
      'invalid_request',
    );
    expect(refusal({ ...exchange, actor_token: 'x.y.z' })).toBe('invalid_request');
    // No client authentication beside the subject token: a client secret would be a credential ignored.
    expect(refusal({ ...exchange, client_secret: 's' })).toBe('invalid_request');
    expect(refusal(exchange, basic('id', 's'))).toBe('invalid_request');
    expect(refusal({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer' })).toBe('unsupported_grant_type');
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

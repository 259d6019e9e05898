import { Webhook } from 'standardwebhooks';
import { generateSecret, sign, signatureHeaders } from './signing';

describe('webhook signing (Standard Webhooks)', () => {
  const body = JSON.stringify({ id: 'evt_01', type: 'ping', data: { ok: true } });

  it('issues whsec_ secrets of 32 random bytes', () => {
    const secret = generateSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    expect(generateSecret()).not.toBe(secret);
  });

  it('produces signatures the standardwebhooks package verifies', () => {
    const secret = generateSecret();
    const headers = signatureHeaders([secret], 'evt_01', body);
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(new Webhook(secret).verify(body, { ...headers })).toEqual(JSON.parse(body));
  });

  it("matches the scheme's published test vector", () => {
    // From the Standard Webhooks specification's reference libraries.
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const payload = '{"test": 2432232314}';
    expect(sign(secret, 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, payload)).toBe(
      'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    );
  });

  it('signs with every valid secret during a rotation; either one verifies', () => {
    const current = generateSecret();
    const previous = generateSecret();
    const headers = signatureHeaders([current, previous], 'evt_02', body);
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(() => new Webhook(current).verify(body, { ...headers })).not.toThrow();
    expect(() => new Webhook(previous).verify(body, { ...headers })).not.toThrow();
    expect(() => new Webhook(generateSecret()).verify(body, { ...headers })).toThrow();
  });

  it('a changed body, id or timestamp fails verification', () => {
    const secret = generateSecret();
    const headers = signatureHeaders([secret], 'evt_03', body);
    const webhook = new Webhook(secret);
    expect(() => webhook.verify(body.replace('true', 'false'), { ...headers })).toThrow();
    expect(() => webhook.verify(body, { ...headers, 'webhook-id': 'evt_04' })).toThrow();
    expect(() =>
      webhook.verify(body, { ...headers, 'webhook-timestamp': String(Number(headers['webhook-timestamp']) - 1) }),
    ).toThrow();
  });
});

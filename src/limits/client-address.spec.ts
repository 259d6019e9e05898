import { addressSubject } from './client-address';

describe('the subject of a per-address quota', () => {
  it('is an IPv4 address itself', () => {
    expect(addressSubject('203.0.113.7')).toBe('ip:203.0.113.7');
    expect(addressSubject('203.0.113.8')).not.toBe(addressSubject('203.0.113.7'));
  });

  it('is the whole /64 of an IPv6 address, however it is written', () => {
    const subject = addressSubject('2001:db8:1:2:aaaa:bbbb:cccc:dddd');
    expect(subject).toBe('ip:2001:db8:1:2::/64');
    for (const other of [
      '2001:db8:1:2::1',
      '2001:0db8:0001:0002:ffff:ffff:ffff:fffe',
      '2001:DB8:1:2:0:0:0:1',
      '2001:db8:1:2::9%eth0',
    ]) {
      expect(addressSubject(other)).toBe(subject);
    }
  });

  it('keeps different /64s apart', () => {
    expect(addressSubject('2001:db8:1:3::1')).not.toBe(addressSubject('2001:db8:1:2::1'));
    expect(addressSubject('::1')).toBe('ip:0:0:0:0::/64');
  });

  it('an IPv4-mapped IPv6 address is the IPv4 address it carries', () => {
    expect(addressSubject('::ffff:203.0.113.7')).toBe('ip:203.0.113.7');
    expect(addressSubject('::ffff:cb00:7107')).toBe('ip:203.0.113.7');
  });

  it('unknown stays one subject', () => {
    expect(addressSubject(undefined)).toBe('ip:unknown');
  });
});

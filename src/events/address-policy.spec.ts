import { checkDestinationUrl, classifyAddress, type AddressClass } from './address-policy';

describe('destination address policy (SSRF)', () => {
  it.each<[string, AddressClass]>([
    // IPv4
    ['8.8.8.8', 'public'],
    ['93.184.216.34', 'public'],
    ['0.0.0.0', 'unspecified'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['172.32.0.1', 'public'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link_local'], // cloud metadata
    ['169.254.0.1', 'link_local'],
    ['100.64.0.1', 'shared'],
    ['100.100.100.200', 'shared'], // a cloud's metadata address
    ['100.128.0.1', 'public'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['198.18.0.1', 'reserved'],
    // IPv6
    ['2606:4700:4700::1111', 'public'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['fc00::1', 'private'],
    ['fd00:ec2::254', 'private'], // cloud metadata over IPv6
    ['fe80::1', 'link_local'],
    ['fe80::1%eth0', 'link_local'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'reserved'],
    ['::7f00:1', 'reserved'],
    // IPv4 carried in IPv6
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:169.254.169.254', 'link_local'],
    ['::ffff:a9fe:a9fe', 'link_local'],
    ['::ffff:10.1.2.3', 'private'],
    ['::ffff:8.8.8.8', 'public'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['64:ff9b::808:808', 'public'],
    ['2002:c0a8:0101::1', 'private'],
    ['2002:0808:0808::1', 'public'],
    // not an address at all
    ['localhost', 'reserved'],
  ])('%s is %s', (address, expected) => {
    expect(classifyAddress(address)).toBe(expected);
  });

  describe('URLs when a subscription is saved', () => {
    const refused = (url: string, allowPrivate = false) => {
      try {
        checkDestinationUrl(url, allowPrivate);
      } catch (error) {
        return error as { code: string; status: number; detail: string };
      }
      return null;
    };

    it('accepts an https URL with a host name or a public address', () => {
      expect(checkDestinationUrl('https://hooks.example.com/a2a?x=1', false).hostname).toBe('hooks.example.com');
      expect(refused('https://93.184.216.34/hook')).toBeNull();
      expect(refused('https://[2606:4700:4700::1111]:8443/hook')).toBeNull();
    });

    it.each([
      ['http://hooks.example.com/', 'https'],
      ['ftp://hooks.example.com/', 'https'],
      ['not a url', 'absolute'],
      ['/relative/path', 'absolute'],
      ['https://user:pass@hooks.example.com/', 'credentials'],
      ['https://token@hooks.example.com/', 'credentials'],
      ['https://127.0.0.1/', 'loopback'],
      ['https://[::1]/', 'loopback'],
      ['https://10.0.0.5/', 'private'],
      ['https://169.254.169.254/latest/meta-data/', 'link-local'],
      ['https://[::ffff:169.254.169.254]/', 'link-local'],
      ['https://0.0.0.0/', 'unspecified'],
      ['https://2130706433/', 'loopback'], // 127.0.0.1 as one decimal number; the URL parser normalizes it
      ['https://0x7f.1/', 'loopback'],
      [`https://example.com/${'a'.repeat(2048)}`, '2048'],
    ])('refuses %s (%s)', (url, reason) => {
      const error = refused(url);
      expect(error).toMatchObject({ status: 400, code: 'invalid_webhook_url' });
      expect(error!.detail).toContain(reason);
    });

    it('with private networks allowed, http and loopback pass (credentials still do not)', () => {
      expect(refused('http://127.0.0.1:8080/hook', true)).toBeNull();
      expect(refused('http://localhost:8080/hook', true)).toBeNull();
      expect(refused('http://u:p@localhost/', true)).toMatchObject({ code: 'invalid_webhook_url' });
    });
  });
});

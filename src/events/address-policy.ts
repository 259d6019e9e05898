import { BlockList, isIP } from 'node:net';
import { badRequest } from '../common/app-error';
import type { CodeWithStatus } from '../common/error-codes';

/**
 * Where the service may send webhooks and push notifications (docs/api.md §8): `https`
 * only, and never to a private, loopback, link-local or metadata address. URLs are
 * checked when a subscription is saved (scheme, credentials, address literals) and
 * again at every send, after DNS resolution, on the address actually connected to.
 * `WEBHOOKS_ALLOW_PRIVATE_NETWORKS=true` lifts both rules (tests, development).
 */
export type AddressClass =
  'public' | 'unspecified' | 'loopback' | 'private' | 'link_local' | 'shared' | 'multicast' | 'reserved';

/** Every range that is not the public internet, by class. Cloud metadata (169.254.169.254, fd00:ec2::254) falls in link-local and private. */
const RANGES: ReadonlyArray<[AddressClass, string, number, 'ipv4' | 'ipv6']> = [
  ['unspecified', '0.0.0.0', 8, 'ipv4'],
  ['private', '10.0.0.0', 8, 'ipv4'],
  ['shared', '100.64.0.0', 10, 'ipv4'], // carrier-grade NAT; also some clouds' metadata
  ['loopback', '127.0.0.0', 8, 'ipv4'],
  ['link_local', '169.254.0.0', 16, 'ipv4'],
  ['private', '172.16.0.0', 12, 'ipv4'],
  ['reserved', '192.0.0.0', 24, 'ipv4'],
  ['reserved', '192.0.2.0', 24, 'ipv4'],
  ['private', '192.168.0.0', 16, 'ipv4'],
  ['reserved', '198.18.0.0', 15, 'ipv4'],
  ['reserved', '198.51.100.0', 24, 'ipv4'],
  ['reserved', '203.0.113.0', 24, 'ipv4'],
  ['multicast', '224.0.0.0', 4, 'ipv4'],
  ['reserved', '240.0.0.0', 4, 'ipv4'], // includes 255.255.255.255
  ['unspecified', '::', 128, 'ipv6'],
  ['loopback', '::1', 128, 'ipv6'],
  ['reserved', '::', 96, 'ipv6'], // IPv4-compatible (deprecated)
  ['reserved', '100::', 64, 'ipv6'],
  ['reserved', '2001:db8::', 32, 'ipv6'],
  ['private', 'fc00::', 7, 'ipv6'],
  ['link_local', 'fe80::', 10, 'ipv6'],
  ['private', 'fec0::', 10, 'ipv6'], // site-local (deprecated)
  ['multicast', 'ff00::', 8, 'ipv6'],
];

const BLOCKS = new Map<AddressClass, BlockList>();
for (const [kind, network, prefix, type] of RANGES) {
  if (!BLOCKS.has(kind)) {
    BLOCKS.set(kind, new BlockList());
  }
  BLOCKS.get(kind)!.addSubnet(network, prefix, type);
}

/** The sixteen bytes of an IPv6 address (isIP already said it is one). */
function ipv6Bytes(address: string): Buffer {
  let text = address.split('%')[0];
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[1].split('.').map(Number);
    text = text.slice(0, -dotted[1].length) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const words = (part: string | undefined) => (part ? part.split(':').map((w) => parseInt(w, 16)) : []);
  const left = words(head);
  const right = words(tail);
  const all = tail === undefined ? left : [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
  const bytes = Buffer.alloc(16);
  all.forEach((word, i) => bytes.writeUInt16BE(word, i * 2));
  return bytes;
}

/**
 * The IPv4 address an IPv6 address carries to the IPv4 internet (IPv4-mapped
 * ::ffff:0:0/96, NAT64 64:ff9b::/96, 6to4 2002::/16), or null.
 */
function embeddedIpv4(address: string): string | null {
  const b = ipv6Bytes(address);
  const v4 = (offset: number) => `${b[offset]}.${b[offset + 1]}.${b[offset + 2]}.${b[offset + 3]}`;
  const zeros = (from: number, to: number) => b.subarray(from, to).every((x) => x === 0);
  if (zeros(0, 10) && b[10] === 0xff && b[11] === 0xff) {
    return v4(12);
  }
  if (b.readUInt16BE(0) === 0x64 && b.readUInt16BE(2) === 0xff9b && zeros(4, 12)) {
    return v4(12);
  }
  if (b.readUInt16BE(0) === 0x2002) {
    return v4(2);
  }
  return null;
}

/** What kind of address this is; anything but `public` is refused. */
export function classifyAddress(address: string): AddressClass {
  const family = isIP(address);
  if (family === 0) {
    return 'reserved';
  }
  if (family === 6) {
    const v4 = embeddedIpv4(address);
    if (v4) {
      return classifyAddress(v4);
    }
  }
  const type = family === 4 ? 'ipv4' : 'ipv6';
  const bare = address.split('%')[0];
  for (const [kind, block] of BLOCKS) {
    if (block.check(bare, type)) {
      return kind;
    }
  }
  return 'public';
}

export const MAX_URL_LENGTH = 2048;

/**
 * The checks that can be made when a URL is saved; throws a 400 with `code` naming
 * what is wrong, as an error of the request's `field`. Host names are resolved only when sending.
 */
export function checkDestinationUrl(
  raw: string,
  allowPrivateNetworks: boolean,
  code: CodeWithStatus<400> = 'invalid_webhook_url',
  field = 'url',
): URL {
  const refuse = (detail: string) => badRequest(code, detail, [{ field, message: detail }]);
  if (raw.length > MAX_URL_LENGTH) {
    throw refuse(`${field} must be at most ${MAX_URL_LENGTH} characters.`);
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse(`${field} must be an absolute URL.`);
  }
  const schemes = allowPrivateNetworks ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) {
    throw refuse(`${field} must use https.`);
  }
  if (url.username || url.password) {
    throw refuse(`${field} must not carry credentials.`);
  }
  if (!url.hostname) {
    throw refuse(`${field} must name a host.`);
  }
  const host = hostOf(url);
  if (!allowPrivateNetworks && isIP(host) !== 0 && classifyAddress(host) !== 'public') {
    throw refuse(
      `${field} points to a ${classifyAddress(host).replace('_', '-')} address; only public addresses are allowed.`,
    );
  }
  return url;
}

/** The host to resolve or connect to: an IPv6 literal without its brackets. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

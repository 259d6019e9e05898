import { isIP } from 'node:net';

/**
 * The subject a per-address quota counts against. An IPv4 address is itself; an
 * IPv6 address stands for its whole /64 — one subscriber usually holds at least a
 * /64 and can pick any address in it, so counting single addresses would hand a
 * client 2^64 fresh quotas. An IPv4-mapped IPv6 address (::ffff:a.b.c.d, as a
 * dual-stack socket reports IPv4 peers) is the IPv4 address it carries.
 */
export function addressSubject(address: string | undefined): string {
  if (!address) {
    return 'ip:unknown';
  }
  const bare = address.split('%')[0];
  const family = isIP(bare);
  if (family === 4) {
    return `ip:${bare}`;
  }
  if (family !== 6) {
    return `ip:${bare}`;
  }
  const words = ipv6Words(bare);
  if (words.slice(0, 5).every((w) => w === 0) && words[5] === 0xffff) {
    return `ip:${words[6] >> 8}.${words[6] & 0xff}.${words[7] >> 8}.${words[7] & 0xff}`;
  }
  return `ip:${words
    .slice(0, 4)
    .map((w) => w.toString(16))
    .join(':')}::/64`;
}

/** The eight 16-bit words of an IPv6 address (isIP already said it is one). */
function ipv6Words(address: string): number[] {
  let text = address.toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number);
    text = text.slice(0, -dotted[0].length) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const parse = (part: string | undefined) => (part ? part.split(':').map((w) => parseInt(w, 16)) : []);
  const left = parse(head);
  const right = parse(tail);
  return tail === undefined ? left : [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
}

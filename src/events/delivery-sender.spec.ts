import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { loadConfig } from '../config/config';
import { DeliverySender, type HostResolver, type ResolvedAddress } from './delivery-sender';

/** A fake DNS: names map to the addresses a resolver would return. */
function resolverOf(zone: Record<string, string[]>): HostResolver & { asked: string[] } {
  const asked: string[] = [];
  const resolve = async (hostname: string): Promise<ResolvedAddress[]> => {
    asked.push(hostname);
    const addresses = zone[hostname];
    if (!addresses) {
      throw new Error(`getaddrinfo ENOTFOUND ${hostname}`);
    }
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return Object.assign(resolve, { asked });
}

describe('DeliverySender', () => {
  let server: Server;
  let port: number;
  let requests: Array<{ headers: IncomingHttpHeaders; body: string }>;
  let connections: number;
  let answer: number | 'hang';

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        requests.push({ headers: req.headers, body });
        if (answer !== 'hang') {
          res.writeHead(answer).end();
        }
      });
    });
    server.on('connection', () => (connections += 1));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  beforeEach(() => {
    requests = [];
    connections = 0;
    answer = 200;
  });

  const sender = (resolver: HostResolver, env: Record<string, string> = {}) => {
    const created = new DeliverySender(loadConfig({ WEBHOOK_TIMEOUT_MS: '300', ...env }), resolver);
    return {
      send: (url: string) => created.send({ url, headers: { 'webhook-id': 'evt_1' }, body: '{"ok":true}' }),
      close: () => created.onApplicationShutdown(),
    };
  };

  describe('with private networks refused (the default)', () => {
    const zone = {
      'metadata.attacker.test': ['169.254.169.254'],
      'mixed.attacker.test': ['93.184.216.34', '10.0.0.7'],
      'mapped.attacker.test': ['::ffff:127.0.0.1'],
      'v6-local.attacker.test': ['fd00:ec2::254'],
      'localhost.attacker.test': ['127.0.0.1'],
    };

    it.each([
      ['metadata.attacker.test', 'a link-local address'],
      ['mixed.attacker.test', 'a private address among public ones'],
      ['mapped.attacker.test', 'an IPv4-mapped loopback address'],
      ['v6-local.attacker.test', 'a private IPv6 address'],
      ['localhost.attacker.test', 'a loopback address'],
    ])('refuses %s, which resolves to %s, without connecting and without saying what it resolves to', async (host) => {
      const resolver = resolverOf(zone);
      const { send, close } = sender(resolver);
      const outcome = await send(`https://${host}:${port}/hook`);
      close();
      // Final (no retry), and the same words whatever the address: no DNS oracle.
      expect(outcome).toMatchObject({
        ok: false,
        statusCode: null,
        error: 'refused: the destination is not allowed',
        final: true,
      });
      expect(resolver.asked).toEqual([host]);
      expect(connections).toBe(0);
    });

    it('refuses an address literal and http without asking DNS', async () => {
      const resolver = resolverOf({});
      const { send, close } = sender(resolver);
      expect((await send(`https://127.0.0.1:${port}/hook`)).error).toBe('refused: the destination is not allowed');
      expect((await send(`https://[::1]:${port}/hook`)).error).toBe('refused: the destination is not allowed');
      expect(await send(`http://93.184.216.34/hook`)).toMatchObject({
        error: 'refused: http: URLs are not allowed; use https',
        final: true,
      });
      close();
      expect(resolver.asked).toEqual([]);
      expect(connections).toBe(0);
    });

    it('reports a name that does not resolve', async () => {
      const { send, close } = sender(resolverOf({}));
      const outcome = await send('https://nowhere.test/hook');
      expect(outcome.error).toBe('nowhere.test could not be resolved');
      expect(outcome.final).toBeUndefined(); // DNS may recover: retried
      close();
    });
  });

  describe('with private networks allowed (tests, development)', () => {
    const allow = { WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true' };

    it('connects to the address it resolved, not to a second lookup (no DNS rebinding)', async () => {
      // receiver.test exists only in this fake zone: the connection can only come from the pinned address.
      const resolver = resolverOf({ 'receiver.test': ['127.0.0.1'] });
      const { send, close } = sender(resolver, allow);
      const outcome = await send(`http://receiver.test:${port}/hook`);
      close();
      expect(outcome).toMatchObject({ ok: true, statusCode: 200, error: null });
      expect(resolver.asked).toEqual(['receiver.test']);
      expect(requests).toHaveLength(1);
      expect(requests[0].headers).toMatchObject({
        host: `receiver.test:${port}`,
        'webhook-id': 'evt_1',
        'content-type': 'application/json',
      });
      expect(requests[0].body).toBe('{"ok":true}');
    });

    it('a refused connection names the failure, never the address connected to', async () => {
      const closed = createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const closedPort = (closed.address() as { port: number }).port;
      await new Promise((resolve) => closed.close(resolve));
      const { send, close } = sender(resolverOf({ 'receiver.test': ['127.0.0.1'] }), allow);
      const outcome = await send(`http://receiver.test:${closedPort}/hook`);
      close();
      expect(outcome).toMatchObject({ ok: false, statusCode: null, error: 'connection failed: ECONNREFUSED' });
      expect(outcome.final).toBeUndefined();
    });

    it('a non-2xx answer is a failure with its status', async () => {
      answer = 410;
      const { send, close } = sender(resolverOf({}), allow);
      expect(await send(`http://127.0.0.1:${port}/hook`)).toMatchObject({
        ok: false,
        statusCode: 410,
        error: 'HTTP 410',
      });
      close();
    });

    it('gives up after the timeout', async () => {
      answer = 'hang';
      const { send, close } = sender(resolverOf({}), allow);
      const outcome = await send(`http://127.0.0.1:${port}/hook`);
      close();
      expect(outcome).toMatchObject({ ok: false, statusCode: null, error: 'timeout: no response within 300 ms' });
      expect(outcome.durationMs).toBeGreaterThanOrEqual(250);
    });

    it('the timeout also bounds name resolution', async () => {
      const { send, close } = sender(() => new Promise<ResolvedAddress[]>(() => undefined), allow);
      expect((await send('http://slow-dns.test/hook')).error).toBe('timeout: no response within 300 ms');
      close();
    });
  });
});

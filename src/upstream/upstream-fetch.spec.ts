import { createServer, type Server } from 'node:http';
import {
  answeredDespiteError,
  grpcUnreached,
  reasonOf,
  upstreamFetch,
  UpstreamRefused,
  UpstreamUnreachable,
} from './upstream-fetch';

/** The forwarder's fetch: the webhook URL rules, no redirects, a header timeout and a size limit. */
describe('upstreamFetch', () => {
  let server: Server;
  let base: string;

  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/redirect') {
        return void res.writeHead(302, { location: 'http://169.254.169.254/' }).end();
      }
      if (req.url === '/big') {
        return void res.end('x'.repeat(10_000));
      }
      if (req.url === '/hang') {
        return;
      } // never answers
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ ok: true, auth: req.headers.authorization ?? null }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  const open = (overrides: Partial<Parameters<typeof upstreamFetch>[0]> = {}) =>
    upstreamFetch({
      allowPrivateNetworks: true,
      resolve: async () => [{ address: '127.0.0.1', family: 4 }],
      timeoutMs: 500,
      maxResponseBytes: 1_000,
      ...overrides,
    });
  const refusal = async (promise: Promise<unknown>) => {
    const error = await promise.then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(UpstreamUnreachable);
    return (error as Error).message;
  };

  it('sends the request with its own headers and returns the response', async () => {
    const res = await open()(`${base}/ok`, { method: 'POST', headers: { authorization: 'Bearer t' }, body: '{}' });
    expect(await res.json()).toEqual({ ok: true, auth: 'Bearer t' });
  });

  it('does not follow redirects', async () => {
    expect(await refusal(open()(`${base}/redirect`))).toBe(
      'it answered with a redirect (HTTP 302), which is not followed',
    );
  });

  it('stops a response past the size limit', async () => {
    const res = await open()(`${base}/big`);
    expect(await refusal(res.text())).toBe('its response exceeded 1000 bytes');
  });

  it('gives up when the headers do not come in time', async () => {
    expect(await refusal(open()(`${base}/hang`))).toBe('no answer within 500 ms');
  });

  it('refuses http, and names that resolve to private addresses or do not resolve, in one text that names no address', async () => {
    const strict = open({ allowPrivateNetworks: false, resolve: async () => [{ address: '10.1.2.3', family: 4 }] });
    const http = await refusal(strict('http://agent.example.com/a2a'));
    expect(http).toBe('http: URLs are not allowed; use https');
    const refused = [
      await refusal(strict('https://agent.example.com/a2a')),
      await refusal(open({ allowPrivateNetworks: false })('https://127.0.0.1/a2a')),
      await refusal(open({ allowPrivateNetworks: false, resolve: async () => [] })('https://agent.example.com/a2a')),
      await refusal(
        open({
          allowPrivateNetworks: false,
          resolve: () => Promise.reject(Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' })),
        })('https://agent.example.com/a2a'),
      ),
    ];
    // Whether a name resolves, and to what kind of address, is not told apart.
    expect(new Set(refused)).toEqual(new Set(['its host name does not resolve to an allowed address']));
    // Each refusal is final: no retry can make the same destination allowed.
    for (const url of ['http://agent.example.com/a2a', 'https://agent.example.com/a2a']) {
      expect(await strict(url).catch((e: unknown) => e)).toBeInstanceOf(UpstreamRefused);
    }
  });

  it('words network failures without addresses', async () => {
    const refused = await refusal(open()('http://127.0.0.1:1/a2a'));
    expect(refused).toBe('the connection was refused');
    expect(reasonOf(new Error('fetch failed', { cause: new UpstreamUnreachable('the connection was refused') }))).toBe(
      'the connection was refused',
    );
    expect(reasonOf(new Error('HTTP error! status: 503 at 10.0.0.1'))).toBe('it answered HTTP 503');
  });
});

/** A gRPC call's failure as the SDK raises it: its transport, with grpc-js's status as the cause. */
const grpcError = (code: number, details: string) =>
  Object.assign(new Error(`gRPC error for sendMessage: ${code} ${details}`), {
    transport: 'grpc',
    status: code,
    cause: Object.assign(new Error(`${code} ${details}`), { code, details }),
  });

describe('answeredDespiteError', () => {
  it('counts a gRPC response that could not be decoded as answered, in the words of an unreadable answer', () => {
    const garbled = grpcError(13, 'Response message parsing error: index out of range: 4 + 10 > 3');
    expect(answeredDespiteError(garbled)).toBe(true);
    expect(reasonOf(garbled)).toBe('its answer could not be understood');
    // Still no refusal by the upstream: no A2A error came with it.
    expect(grpcUnreached(garbled)).not.toBeNull();
  });

  it('does not count a call the upstream never answered, nor a status it sent', () => {
    for (const error of [
      grpcError(14, 'No connection established'),
      grpcError(13, 'Received RST_STREAM with code 2 (Internal server error)'),
      grpcError(4, 'Deadline exceeded'),
      new Error('Response message parsing error'),
      null,
    ]) {
      expect(answeredDespiteError(error)).toBe(false);
    }
  });
});

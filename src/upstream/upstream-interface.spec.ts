import type { AgentCard } from '@a2a-js/sdk';
import { AppError } from '../common/app-error';
import { chooseInterface, interfaceUrl } from './upstream-interface';

const card = (...interfaces: Array<[string, string, string?]>): AgentCard =>
  ({
    supportedInterfaces: interfaces.map(([protocolBinding, url, protocolVersion]) => ({
      url,
      protocolBinding,
      protocolVersion,
    })),
  }) as unknown as AgentCard;

const refusal = (run: () => unknown): string | null => {
  try {
    run();
    return null;
  } catch (error) {
    return error instanceof AppError ? `${error.status} ${error.code}` : String(error);
  }
};

/** Which interface of an upstream's card the forwarder calls (UpstreamsService.set). */
describe('chooseInterface', () => {
  const offered = card(
    ['HTTP+JSON', 'https://a.example/rest', '1.0'],
    ['JSONRPC', 'https://a.example/rpc', '0.3.0'],
    ['GRPC', 'a.example:443', '1.0'],
  );

  it("takes the card's first interface when the request names nothing", () => {
    expect(chooseInterface(offered, {})).toEqual({
      binding: 'HTTP+JSON',
      protocolVersion: '1.0',
      url: 'https://a.example/rest',
    });
  });

  it('takes the first interface that the request allows; versions count by generation', () => {
    expect(chooseInterface(offered, { protocolVersion: '0.3' })).toEqual({
      binding: 'JSONRPC',
      protocolVersion: '0.3',
      url: 'https://a.example/rpc',
    });
    expect(chooseInterface(offered, { binding: 'GRPC' })).toEqual({
      binding: 'GRPC',
      protocolVersion: '1.0',
      url: 'a.example:443',
    });
  });

  it('passes over bindings the forwarder does not speak and versions of no known generation', () => {
    const odd = card(
      ['WEBSOCKET', 'wss://a.example', '1.0'],
      ['JSONRPC', 'https://a.example/v2', '2.0'],
      ['JSONRPC', 'https://a.example/rpc', '1.0.1'],
    );
    expect(chooseInterface(odd, {})).toEqual({
      binding: 'JSONRPC',
      protocolVersion: '1.0',
      url: 'https://a.example/rpc',
    });
  });

  it('reads an interface that names no version as 1.0', () => {
    expect(chooseInterface(card(['JSONRPC', 'https://a.example/rpc']), { protocolVersion: '1.0' }).url).toBe(
      'https://a.example/rpc',
    );
  });

  it('keeps what the request names, with no URL of the card, when the card offers no such interface or there is no card', () => {
    expect(chooseInterface(offered, { binding: 'GRPC', protocolVersion: '0.3' })).toEqual({
      binding: 'GRPC',
      protocolVersion: '0.3',
      url: null,
    });
    expect(chooseInterface(null, { binding: 'JSONRPC', protocolVersion: '1.0' })).toEqual({
      binding: 'JSONRPC',
      protocolVersion: '1.0',
      url: null,
    });
  });

  it('fills in what the request leaves open from the card', () => {
    expect(chooseInterface(offered, { binding: 'JSONRPC' })).toEqual({
      binding: 'JSONRPC',
      protocolVersion: '0.3',
      url: 'https://a.example/rpc',
    });
  });

  it('is 422 upstream_binding_unsupported when nothing the forwarder speaks is left', () => {
    expect(refusal(() => chooseInterface(null, {}))).toBe('422 upstream_binding_unsupported');
    expect(refusal(() => chooseInterface(card(['WEBSOCKET', 'wss://a.example', '1.0']), {}))).toBe(
      '422 upstream_binding_unsupported',
    );
    expect(refusal(() => chooseInterface(offered, { binding: 'JSONRPC', protocolVersion: undefined }))).toBeNull();
    expect(refusal(() => chooseInterface(null, { binding: 'WEBSOCKET' as never, protocolVersion: '1.0' }))).toBe(
      '422 upstream_binding_unsupported',
    );
  });
});

/** How a card's interface URL is stored, per binding (docs/architecture.md "Which binding"). */
describe('interfaceUrl', () => {
  it('keeps HTTP URLs as the card gives them', () => {
    expect(interfaceUrl('https://agent.example/rest', 'HTTP+JSON', false)).toBe('https://agent.example/rest');
    expect(interfaceUrl('https://agent.example/a2a', 'JSONRPC', true)).toBe('https://agent.example/a2a');
  });

  it('gives a gRPC host:port a scheme: TLS, plaintext only for a private address literal when private networks are allowed', () => {
    expect(interfaceUrl('agent.example:443', 'GRPC', false)).toBe('https://agent.example:443');
    expect(interfaceUrl('agent.example:50051', 'GRPC', true)).toBe('https://agent.example:50051');
    expect(interfaceUrl('127.0.0.1:50051', 'GRPC', true)).toBe('http://127.0.0.1:50051');
    expect(interfaceUrl('127.0.0.1:50051', 'GRPC', false)).toBe('https://127.0.0.1:50051');
    expect(interfaceUrl('grpcs://agent.example:443', 'GRPC', false)).toBe('https://agent.example:443');
    expect(interfaceUrl('grpc://agent.internal:50051', 'GRPC', true)).toBe('http://agent.internal:50051');
    expect(interfaceUrl('grpc://agent.internal:50051', 'GRPC', false)).toBe('https://agent.internal:50051');
  });

  it('reads only the interfaces of a card that have an interface’s shape (the card is the upstream’s JSON)', () => {
    const hostile = (supportedInterfaces: unknown) => ({ supportedInterfaces }) as unknown as AgentCard;
    const wanted = { binding: 'JSONRPC' as const, protocolVersion: '1.0' as const };
    for (const value of [{ url: 'https://a.example', protocolBinding: 'JSONRPC' }, 'x', 5, null]) {
      expect(chooseInterface(hostile(value), wanted)).toEqual({ ...wanted, url: null });
    }
    const mixed = hostile([
      5,
      { url: 7, protocolBinding: 'JSONRPC' },
      { url: 'https://a.example', protocolBinding: 'JSONRPC', protocolVersion: 1 },
      { url: 'https://b.example', protocolBinding: 'JSONRPC' },
    ]);
    expect(chooseInterface(mixed, {})).toEqual({ ...wanted, url: 'https://b.example' });
    expect(refusal(() => chooseInterface(hostile({}), {}))).toBe('422 upstream_binding_unsupported');
  });
});

import { A2AError } from '@a2a-js/sdk/errors';
import { grpcUnreached, reasonOf } from './upstream-fetch';
import { interfaceUrl } from './upstreams.service';

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
});

/** gRPC failures the SDK raises as A2AError: a call that did not reach the upstream is not a refusal. */
describe('grpcUnreached', () => {
  const grpcError = (code: number) =>
    Object.assign(new A2AError({ message: `gRPC error: ${code}`, cause: { code } } as never), { transport: 'grpc' });

  it('words an unreachable gRPC upstream, and reasonOf uses the words', () => {
    expect(grpcUnreached(grpcError(14))).toBe('it is unavailable (the connection was refused or lost)');
    expect(reasonOf(grpcError(4))).toBe('it did not answer in time');
  });

  it('is null for an answer of the upstream (an A2A error) and for other transports', () => {
    expect(grpcUnreached(new A2AError({ message: 'task not found' } as never))).toBeNull();
    expect(grpcUnreached(grpcError(3))).toBeNull();
    expect(grpcUnreached(new Error('boom'))).toBeNull();
  });
});

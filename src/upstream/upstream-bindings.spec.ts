import { A2AError } from '@a2a-js/sdk/errors';
import { grpcUnreached, reasonOf } from './upstream-fetch';

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

import { ConfigError, loadConfig } from './config';

describe('gRPC configuration', () => {
  it('listens on 50051 by default and advertises the public host with that port', () => {
    const config = loadConfig({ PUBLIC_BASE_URL: 'https://agents.example.test' });
    expect({ port: config.grpcPort, host: config.grpcHost, address: config.grpcPublicAddress }).toEqual({
      port: 50051,
      host: '0.0.0.0',
      address: 'agents.example.test:50051',
    });
  });

  it('GRPC_PORT=off disables it (nothing advertised); 0 picks a free port', () => {
    expect(loadConfig({ GRPC_PORT: 'off' })).toMatchObject({ grpcPort: null, grpcPublicAddress: null });
    expect(loadConfig({ GRPC_PORT: 'OFF' }).grpcPort).toBeNull();
    expect(loadConfig({ GRPC_PORT: '0' }).grpcPort).toBe(0);
  });

  it('GRPC_HOST defaults to HOST; GRPC_PUBLIC_ADDRESS overrides the advertised address', () => {
    expect(loadConfig({ HOST: '127.0.0.1' }).grpcHost).toBe('127.0.0.1');
    expect(loadConfig({ GRPC_PUBLIC_ADDRESS: 'grpc.example.test:443' }).grpcPublicAddress).toBe(
      'grpc.example.test:443',
    );
  });

  it('refuses a port that is neither a number in range nor off', () => {
    expect(() => loadConfig({ GRPC_PORT: 'yes' })).toThrow(ConfigError);
    expect(() => loadConfig({ GRPC_PORT: '70000' })).toThrow(/GRPC_PORT/);
  });
});

import * as grpc from '@grpc/grpc-js';
import { A2AService } from '@a2a-js/sdk/server/grpc';
import { GrpcBindingService } from '../../src/protocol/grpc-binding.service';
import type { TestApp } from './app';

const A2AClient = grpc.makeGenericClientConstructor(A2AService as unknown as grpc.ServiceDefinition, 'A2AService');

export interface GrpcOutcome {
  /** The gRPC status code (0: OK). */
  code: number;
  details: string;
  /** The `a2a-reason` trailer (CONTRACT §5's reason), when the call was refused by a check. */
  reason: string | null;
  trailers: grpc.Metadata;
  value?: unknown;
}

/** A raw v1.0 `A2AService` client to the app's gRPC port (GRPC_PORT=0 in the test's startApp). */
export function grpcClient(t: TestApp): grpc.Client {
  const port = t.app.get(GrpcBindingService).port;
  if (!port) throw new Error('start the app with GRPC_PORT to speak gRPC');
  return new A2AClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
}

/** HTTP-style credential headers (X-API-Key, Authorization) as gRPC metadata. */
export function metadataOf(headers: Record<string, string>): grpc.Metadata {
  const metadata = new grpc.Metadata();
  for (const [name, value] of Object.entries(headers)) metadata.set(name.toLowerCase(), value);
  return metadata;
}

/** One unary call of the v1.0 service, as its status, details and trailers. */
export function unary(
  client: grpc.Client,
  method: string,
  request: unknown,
  metadata: grpc.Metadata,
): Promise<GrpcOutcome> {
  return new Promise((resolve) => {
    const call = (
      client as unknown as Record<
        string,
        (r: unknown, m: grpc.Metadata, cb: grpc.requestCallback<unknown>) => grpc.ClientUnaryCall
      >
    )[method];
    call.call(client, request, metadata, (error, value) => {
      if (!error) return resolve({ code: 0, details: '', reason: null, trailers: new grpc.Metadata(), value });
      const reason = error.metadata?.get('a2a-reason')[0];
      resolve({
        code: error.code,
        details: error.details,
        reason: reason === undefined ? null : String(reason),
        trailers: error.metadata,
      });
    });
  });
}

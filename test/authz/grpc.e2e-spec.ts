import * as grpc from '@grpc/grpc-js';
import { A2AService } from '@a2a-js/sdk/server/grpc';
import { LegacyA2AService } from '@a2a-js/sdk/compat/v0_3/server/grpc';
import { decodeErrorInfo, decodeStatus, fromGrpcError, GRPC_STATUS_DETAILS_BIN } from '@a2a-js/sdk/errors/grpc';
import { GrpcBindingService } from '../../src/protocol/grpc-binding.service';
import { startApp, type TestApp } from '../support/app';
import { metadataOf } from '../support/grpc';
import { TOKEN_CREDENTIALS, World, type Credential, type TokenCredential } from './world';

/**
 * The gRPC binding's authorization table: every RPC of both services × every
 * credential kind → the gRPC status (docs/walkthrough.md, "Protocol bindings"), with docs/api.md §5's
 * reason in the `a2a-reason` trailer. The credential travels as `x-api-key` metadata
 * (a Console session or an access token as `authorization`); the worker as `a2a-tenant`.
 * An access token (docs/api.md §17) gets exactly its key's answer. A call that
 * passes the checks reaches its method — here with an empty request, which the method
 * refuses in its own way, with no `a2a-reason`.
 */
const KEY_TABLE: Array<[Credential, grpc.status | 'method', string | null]> = [
  ['none', grpc.status.UNAUTHENTICATED, 'unauthenticated'],
  ['malformed', grpc.status.UNAUTHENTICATED, 'unauthenticated'],
  ['revoked', grpc.status.UNAUTHENTICATED, 'unauthenticated'],
  ['admin', grpc.status.PERMISSION_DENIED, 'admin_key_not_allowed'],
  ['agentUnclaimed', grpc.status.PERMISSION_DENIED, 'identity_unclaimed'],
  ['agent', 'method', null],
  ['console', grpc.status.PERMISSION_DENIED, 'console_session_not_allowed'],
  ['otherConsole', grpc.status.PERMISSION_DENIED, 'console_session_not_allowed'],
  ['otherAdmin', grpc.status.PERMISSION_DENIED, 'admin_key_not_allowed'],
];
const TABLE: Array<[Credential | TokenCredential, grpc.status | 'method', string | null]> = [
  ...KEY_TABLE,
  ...Object.entries(TOKEN_CREDENTIALS).map(([token, key]) => {
    const [, expected, reason] = KEY_TABLE.find(([credential]) => credential === key)!;
    return [token as TokenCredential, expected, reason] as [TokenCredential, grpc.status | 'method', string | null];
  }),
];

type Definition = Record<string, { path: string; responseStream: boolean }>;
const METHODS = [
  ...Object.values(A2AService as unknown as Definition),
  ...Object.values(LegacyA2AService as unknown as Definition),
].map((method) => [method.path, method.responseStream] as const);

describe('gRPC binding: authorization', () => {
  let t: TestApp;
  let w: World;
  let client: grpc.Client;

  beforeAll(async () => {
    t = await startApp({ EVENTS_DISPATCHER: 'off', GRPC_PORT: '0', GRPC_HOST: '127.0.0.1' });
    w = await World.create(t);
    client = new grpc.Client(`127.0.0.1:${t.app.get(GrpcBindingService).port}`, grpc.credentials.createInsecure());
  });
  afterAll(async () => {
    client.close();
    await t.close();
  });

  /** One call with an empty request message; its final status and `a2a-reason`. */
  function call(
    path: string,
    stream: boolean,
    metadata: grpc.Metadata,
  ): Promise<{ code: grpc.status; reason: string | null }> {
    const raw = (value: Buffer) => value;
    return new Promise((resolve) => {
      const finish = (error: grpc.ServiceError | null) => {
        const reason = error?.metadata?.get('a2a-reason')[0];
        resolve({ code: error?.code ?? grpc.status.OK, reason: reason === undefined ? null : String(reason) });
      };
      if (!stream) {
        client.makeUnaryRequest(path, raw, raw, Buffer.alloc(0), metadata, (error) => finish(error));
        return;
      }
      const events = client.makeServerStreamRequest(path, raw, raw, Buffer.alloc(0), metadata);
      events.on('data', () => undefined);
      events.on('error', finish);
      events.on('end', () => finish(null));
    });
  }

  it('serves both services: every RPC of v1.0 and v0.3', () => {
    expect(METHODS.map(([path]) => path.split('/')[1])).toEqual([
      ...Array(11).fill('lf.a2a.v1.A2AService'),
      ...Array(10).fill('a2a.v1.A2AService'),
    ]);
  });

  it("a refusal carries its reason as a google.rpc.ErrorInfo in grpc-status-details-bin (A2A v1.0 §10.6), in the service's domain", async () => {
    const raw = (value: Buffer) => value;
    for (const [credential, code, reason] of TABLE.filter(([, expected]) => expected !== 'method')) {
      const metadata = metadataOf({ ...w.headers(credential), 'a2a-tenant': w.worker.handle });
      const error = await new Promise<grpc.ServiceError>((resolve) =>
        client.makeUnaryRequest('/lf.a2a.v1.A2AService/GetTask', raw, raw, Buffer.alloc(0), metadata, (e) =>
          resolve(e!),
        ),
      );
      const status = decodeStatus(error.metadata.get(GRPC_STATUS_DETAILS_BIN)[0] as Buffer);
      expect({ code: status.code, message: status.message }).toEqual({ code, message: error.details });
      expect(status.details.map((detail) => ({ typeUrl: detail.typeUrl, ...decodeErrorInfo(detail.value) }))).toEqual([
        {
          typeUrl: 'type.googleapis.com/google.rpc.ErrorInfo',
          reason: reason!.toUpperCase(),
          domain: 'a2a-service',
          metadata: { reason: reason!, request_id: String(error.metadata.get('x-request-id')[0]) },
        },
      ]);
      // Not an A2A error: the SDK's client does not mistake it for one.
      expect(fromGrpcError(error).name).not.toMatch(/TaskNotFound|RequestMalformed|VersionNotSupported/);
    }
  });

  describe.each(METHODS)('%s', (path, stream) => {
    it.each(TABLE)('%s → %s', async (credential, expected, reason) => {
      const metadata = metadataOf({ ...w.headers(credential), 'a2a-tenant': w.worker.handle });
      const outcome = await call(path, stream, metadata);
      if (expected === 'method') {
        expect(outcome.reason).toBeNull();
        // The method's own answer to an empty request: never a check's status, never an internal error.
        expect([
          grpc.status.UNAUTHENTICATED,
          grpc.status.PERMISSION_DENIED,
          grpc.status.RESOURCE_EXHAUSTED,
          grpc.status.INTERNAL,
          grpc.status.UNKNOWN,
        ]).not.toContain(outcome.code);
      } else {
        expect(outcome).toEqual({ code: expected, reason });
      }
    });
  });
});

import { randomUUID } from 'node:crypto';
import { addressSubject } from '../limits/client-address';
import { once } from 'node:events';
import { BeforeApplicationShutdown, Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import * as grpc from '@grpc/grpc-js';
import { A2AService, grpcService } from '@a2a-js/sdk/server/grpc';
import { LegacyA2AService, legacyGrpcService } from '@a2a-js/sdk/compat/v0_3/server/grpc';
import { A2AError } from '@a2a-js/sdk/errors';
import { buildGrpcErrorMetadata, grpcStatusFor, GrpcVersionNotSupportedError } from '@a2a-js/sdk/errors/grpc';
import type { Logger } from 'pino';
import { runInRequestContext, traceIdOf, type RequestContext } from '../common/request-context';
import { CredentialCheck } from '../auth/credential-check';
import type { AgentKeyPrincipal } from '../common/principal';
import type { SurfaceName } from '../auth/surfaces';
import { checkErrorInfo, checkReason, toAppError } from '../common/problem.filter';
import { LOGGER } from '../common/tokens';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { Metrics } from '../metrics/metrics';
import { meteredHandler } from './metered-handler';
import type { A2AVersion } from '../ledger/entities/push-notification-config.entity';
import { bindHooks, BindingRequestHandler, type BindingHooks } from './binding-handler';
import { grpcStatusDetails, RPC_CODE, rpcStatusFor } from '../common/binding-status';
import { LedgerRequestHandler } from './ledger-request-handler';
import { ProtocolGate, type OpenCall } from './protocol-gate';
import { admittedCallers } from './admitted-caller';
import { boundedStatus, readableService, RefusedRequest } from './grpc-messages';
import { spokenVersion } from '../common/a2a-version';
import { SpanKind } from '@opentelemetry/api';
import { contextFrom, inSpan } from '../tracing/tracing';

type Call = grpc.ServerUnaryCall<unknown, unknown> | grpc.ServerWritableStream<unknown, unknown>;
type Kind = 'send' | 'stream' | 'unary';
type Method = (call: Call, callback?: grpc.sendUnaryData<unknown>) => Promise<void> | void;

/** Who may call each method of both gRPC services: the protocol's surface, as `POST /a2a/{handle}` (snapshotted in test/authz/permissions.snapshot.json). */
export const GRPC_SURFACE: SurfaceName = 'protocol';

/** The methods that are not plain unary calls, per service (the others are). */
const KINDS: Record<A2AVersion, Record<string, Kind>> = {
  '1.0': { sendMessage: 'send', sendStreamingMessage: 'stream', subscribeToTask: 'stream' },
  '0.3': { sendMessage: 'send', sendStreamingMessage: 'stream', taskSubscription: 'stream' },
};

/**
 * Where the worker's handle is read: v1.0 requests carry it as `tenant` (A2A v1.0's
 * multi-tenancy); v0.3 messages have no such field, so the `a2a-tenant` metadata
 * entry carries it (also accepted on v1.0 calls without a `tenant`).
 */
export const TENANT_METADATA = 'a2a-tenant';
const A2A_VERSION_METADATA = 'a2a-version';

/**
 * The gRPC binding (docs/api.md §5) on GRPC_PORT: the SDK's `A2AService` (v1.0) and
 * its v0.3 service, over the same LedgerRequestHandler as the other bindings.
 * Before the SDK sees a call: the credential from the `x-api-key` metadata and the
 * protocol quota (CredentialCheck, as the HTTP guard), then ProtocolGate's checks and
 * open-call slot; errors are gRPC statuses by the one table in binding-status.ts,
 * with the check's reason in the `a2a-reason` trailer. Messages over the protocol's
 * body limit are refused by gRPC itself (RESOURCE_EXHAUSTED). Started with the
 * application, stopped with it (open streams end, then the server drains).
 */
@Injectable()
export class GrpcBindingService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private server: grpc.Server | null = null;
  private boundPort: number | null = null;
  private readonly admitted = new WeakMap<object, OpenCall>();

  constructor(
    private readonly gate: ProtocolGate,
    private readonly credentials: CredentialCheck,
    private readonly ledger: LedgerRequestHandler,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly metrics: Metrics,
  ) {}

  /** The port the server listens on (GRPC_PORT, or the one chosen for `0`); null when off. */
  get port(): number | null {
    return this.boundPort;
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.config.grpcPort === null) {
      return;
    }
    const server = new grpc.Server({
      'grpc.max_receive_message_length': this.config.protocolBodyLimitBytes,
      interceptors: [boundedStatus],
    });
    const options = {
      requestHandler: new BindingRequestHandler(meteredHandler(this.ledger, 'grpc', this.metrics)),
      ...admittedCallers(this.admitted),
    };
    server.addService(readableService(A2AService), this.checked(grpcService(options), '1.0'));
    server.addService(readableService(LegacyA2AService), this.checked(legacyGrpcService(options), '0.3'));
    const address = `${this.config.grpcHost}:${this.config.grpcPort}`;
    this.boundPort = await new Promise<number>((resolve, reject) =>
      server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (error, port) =>
        error
          ? reject(
              new Error(
                `gRPC cannot listen on ${address} (GRPC_PORT, GRPC_HOST; GRPC_PORT=off disables it): ${error.message}`,
              ),
            )
          : resolve(port),
      ),
    );
    this.server = server;
    this.logger.info({ grpc_port: this.boundPort }, 'gRPC listening');
  }

  /** Open streams have been ended (ProtocolGate); in-flight unary calls finish, up to the shutdown grace. */
  async beforeApplicationShutdown(): Promise<void> {
    const server = this.server;
    if (!server) {
      return;
    }
    this.server = null;
    const deadline = setTimeout(() => server.forceShutdown(), this.config.shutdownGraceMs);
    await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
    clearTimeout(deadline);
  }

  /** The SDK's service implementation, each method behind the protocol's checks. */
  private checked(service: grpc.UntypedServiceImplementation, version: A2AVersion): grpc.UntypedServiceImplementation {
    const checked: grpc.UntypedServiceImplementation = {};
    for (const [name, method] of Object.entries(service) as Array<[string, Method]>) {
      const kind = KINDS[version][name] ?? 'unary';
      // The call's span (SERVER), a child of the `traceparent` metadata when the caller sends one.
      const traced = (call: Call, work: () => Promise<void>) =>
        inSpan(
          `a2a grpc ${name}`,
          {
            kind: SpanKind.SERVER,
            attributes: { 'rpc.system': 'grpc', 'rpc.method': name, 'a2a.version': version },
          },
          work,
          contextFrom({
            traceparent: call.metadata.get('traceparent')[0]?.toString(),
            tracestate: call.metadata.get('tracestate')[0]?.toString(),
          }),
        );
      checked[name] =
        kind === 'stream'
          ? (call: grpc.ServerWritableStream<unknown, unknown>) =>
              inContext(
                new CallLog(this.logger, call),
                (log) => void traced(call, () => this.stream(call, method, version, log)),
              )
          : (call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) =>
              inContext(
                new CallLog(this.logger, call),
                (log) => void traced(call, () => this.unary(call, callback, method, version, kind, log)),
              );
    }
    return checked;
  }

  private async unary(
    call: grpc.ServerUnaryCall<unknown, unknown>,
    callback: grpc.sendUnaryData<unknown>,
    method: Method,
    version: A2AVersion,
    kind: Kind,
    log: CallLog,
  ) {
    let answered = false;
    const reply: grpc.sendUnaryData<unknown> = (error, value) => {
      if (answered) {
        return;
      }
      answered = true;
      log.done(error?.code ?? grpc.status.OK);
      callback(error, value);
    };
    if (call.request instanceof RefusedRequest) {
      return reply(this.status(call.request.refusal, log));
    }
    const open = await this.open(call, version, kind, log, {
      // The SDK would call it an internal error: answer first, its own answer is then ignored.
      refuse: (refusal) => (reply(this.status(refusal, log)), new Error(refusal.detail)),
      ready: async () => undefined,
    }).catch((error: unknown) => void reply(this.status(error, log)));
    if (!open) {
      return;
    }
    try {
      await method(call, reply);
    } finally {
      open.end();
    }
  }

  private async stream(
    call: grpc.ServerWritableStream<unknown, unknown>,
    method: Method,
    version: A2AVersion,
    log: CallLog,
  ) {
    call.on('error', (error: { code?: number }) => log.done(error.code ?? grpc.status.UNKNOWN));
    call.on('finish', () => log.done(grpc.status.OK));
    call.on('cancelled', () => log.done(grpc.status.CANCELLED));
    if (call.request instanceof RefusedRequest) {
      return void call.emit('error', this.status(call.request.refusal, log));
    }
    const open = await this.open(call, version, 'stream', log, {
      refuse: (refusal) => (call.emit('error', this.status(refusal, log)), null),
      ready: async (signal) => {
        if (call.writableNeedDrain) {
          await once(call, 'drain', { signal });
        }
      },
    }).catch((error: unknown) => void call.emit('error', this.status(error, log)));
    if (!open) {
      return;
    }
    const maxDuration = setTimeout(() => open.abort(), this.config.sseMaxDurationMs);
    try {
      await method(call);
    } finally {
      clearTimeout(maxDuration);
      open.end();
    }
  }

  /** docs/api.md §5's checks in order, then the call's slot; the SDK then finds the call through `admitted`. */
  private async open(
    call: Call,
    version: A2AVersion,
    kind: Kind,
    log: CallLog,
    hooks: BindingHooks,
  ): Promise<OpenCall> {
    const headers: Record<string, string> = {};
    for (const name of ['x-api-key', 'authorization']) {
      const value = call.metadata.get(name)[0];
      if (value !== undefined) {
        headers[name] = value.toString();
      }
    }
    // The RateLimit headers: a refusal's travel in its trailers (status()); a success's in the response's initial metadata.
    const rateLimit = new grpc.Metadata();
    const principal = (await this.credentials.admit(
      GRPC_SURFACE,
      { method: 'POST', headers },
      addressSubject(peerAddress(call.getPeer())),
      { setHeader: (name: string, value: string) => rateLimit.set(name.toLowerCase(), value) },
      (identified) => (log.principal = { kind: identified.kind, id: identified.id }),
    )) as AgentKeyPrincipal;
    const request = call.request as
      { tenant?: string; configuration?: { returnImmediately?: boolean; blocking?: boolean } } | undefined;
    const handle = request?.tenant || call.metadata.get(TENANT_METADATA)[0]?.toString() || '';
    const admitted = await this.gate.admit(principal, handle);
    // The generation is the service called; `a2a-version` may name it, or the other one this service speaks (A2A v1.0 §3.6.2).
    const requested = call.metadata.get(A2A_VERSION_METADATA)[0]?.toString();
    if (requested !== undefined && !spokenVersion(requested)) {
      // The A2A TCK 1.0 checks UNIMPLEMENTED, as the specification v1.0.0 maps it (v1.0.1: FAILED_PRECONDITION; docs/api.md §5).
      throw new GrpcVersionNotSupportedError({
        message: `A2A version ${requested} is not spoken here: lf.a2a.v1.A2AService is A2A 1.0, a2a.v1.A2AService 0.3 (a2a-version 1.0, 0.3, or none).`,
        status: grpc.status.UNIMPLEMENTED,
      });
    }
    // Protobuf has no absent booleans: a v0.3 send blocks when it says so (the SDK's v0.3 client does by default).
    const blocking =
      kind === 'send' &&
      (version === '1.0'
        ? request?.configuration?.returnImmediately !== true
        : request?.configuration?.blocking === true);
    const open = this.gate.start(principal, admitted, { version, blocking, staysOpen: kind === 'stream' || blocking });
    bindHooks(open.context, hooks);
    call.on('cancelled', () => open.abort());
    // The SDK sends the initial metadata (its extension header) once the method has run; ours joins it.
    const sendMetadata = call.sendMetadata.bind(call);
    call.sendMetadata = (metadata: grpc.Metadata) => {
      metadata.merge(rateLimit);
      sendMetadata(metadata);
    };
    this.admitted.set(call, open);
    return open;
  }

  /**
   * A check's error as a gRPC status (binding-status.ts), its reason, request id and
   * Retry-After in the trailers, and the reason as a `google.rpc.ErrorInfo` in the
   * status details (`grpc-status-details-bin`).
   */
  private status(error: unknown, log: CallLog): Partial<grpc.StatusObject> {
    if (error instanceof A2AError) {
      // An A2A error of the protocol itself: the SDK's form (its ErrorInfo in the A2A domain), as the SDK answers a method's.
      const metadata = buildGrpcErrorMetadata(grpc.Metadata, error) ?? new grpc.Metadata();
      metadata.set('x-request-id', log.requestId);
      return { code: grpcStatusFor(error), details: error.message, metadata };
    }
    const problem = toAppError(error);
    if (problem.status >= 500) {
      this.logger.error({ request_id: log.requestId, err: error }, 'gRPC call failed');
    }
    const code = RPC_CODE[rpcStatusFor(problem.status)];
    const metadata = new grpc.Metadata();
    metadata.set('x-request-id', log.requestId);
    metadata.set('a2a-reason', checkReason(problem));
    // A2A v1.0 §10.6: the status details carry an ErrorInfo (the service's domain: these are not A2A errors).
    metadata.set(
      'grpc-status-details-bin',
      grpcStatusDetails(code, problem.detail, checkErrorInfo(problem, log.requestId)),
    );
    for (const [name, value] of Object.entries(problem.extra.headers ?? {})) {
      metadata.set(name.toLowerCase(), value);
    }
    return { code, details: problem.detail, metadata };
  }
}

/** Runs a call's handling inside its log context: every line it writes carries the call's request id and principal. */
function inContext(log: CallLog, handle: (log: CallLog) => void): void {
  runInRequestContext(log, () => handle(log));
}

/**
 * One structured log line per gRPC call, as `requestLogMiddleware` writes for HTTP; also
 * the call's request context (request-context.ts), its principal set once authenticated.
 */
class CallLog implements RequestContext {
  readonly requestId = randomUUID();
  readonly traceId: string | undefined;
  principal: { kind: string; id: string } | undefined;
  private readonly started = process.hrtime.bigint();
  private logged = false;

  constructor(
    private readonly logger: Logger,
    private readonly call: Call,
  ) {
    this.traceId = traceIdOf(call.metadata.get('traceparent')[0]?.toString());
  }

  done(code: number): void {
    if (this.logged) {
      return;
    }
    this.logged = true;
    const durationMs = Number(process.hrtime.bigint() - this.started) / 1e6;
    this.logger.info(
      {
        request_id: this.requestId,
        method: 'gRPC',
        path: this.call.getPath(),
        status: grpc.status[code] ?? code,
        duration_ms: Math.round(durationMs * 100) / 100,
        principal: this.principal,
      },
      'request',
    );
  }
}

/** `ipv4:127.0.0.1:5000`, `ipv6:[::1]:5000` → the address alone. */
function peerAddress(peer: string): string {
  return (
    peer
      .replace(/^ipv[46]:/, '')
      .replace(/:\d+$/, '')
      .replace(/^\[|\]$/g, '') || 'unknown'
  );
}

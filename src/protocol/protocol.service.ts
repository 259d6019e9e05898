import { Inject, Injectable } from '@nestjs/common';
import { formatSSEErrorEvent, formatSSEEvent, SSE_HEADERS } from '@a2a-js/sdk';
import { A2A_ERROR_CODE, RequestMalformedError, VersionNotSupportedError } from '@a2a-js/sdk/errors';
import { JsonRpcTransportHandler } from '@a2a-js/sdk/server';
import { LegacyJsonRpcTransportHandler } from '@a2a-js/sdk/compat/v0_3/server';
import type { Request, Response } from 'express';
import type { Logger } from 'pino';
import type { AgentKeyPrincipal } from '../common/principal';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { jsonRpcErrorBody } from '../common/problem.filter';
import { LOGGER } from '../common/tokens';
import { Metrics } from '../metrics/metrics';
import type { A2AVersion } from '../ledger/entities/push-notification-config.entity';
import { isA2AMethod, paramsErrors } from './a2a-params';
import { CallRefused } from './call-standing';
import { LedgerRequestHandler } from './ledger-request-handler';
import { meteredHandler } from './metered-handler';
import { spokenVersion } from '../common/a2a-version';
import { ProtocolGate, type OpenCall } from './protocol-gate';
import { writeFrame } from './sse';
import { inSpan } from '../tracing/tracing';

type RpcId = string | number | null;
type RpcResponse = { jsonrpc: string; id: RpcId; result?: unknown; error?: unknown };
type RpcError = { code: number; message: string; data?: unknown };

/**
 * `POST /a2a/{handle}` (docs/api.md §5), the JSON-RPC binding. The guard has done check 1
 * up to the claimed agent key; ProtocolGate does the rest in order — the caller's own
 * receiver enabled, the worker servable, admission — as HTTP errors with a JSON-RPC body
 * (ProblemFilter); this service then
 * picks the A2A generation from `A2A-Version` and hands the call to the SDK's
 * JSON-RPC transport handler of that generation, which validates the method and its
 * params, calls LedgerRequestHandler and shapes the result. Method-level errors are
 * JSON-RPC errors with HTTP 200. Streams are written here as SSE, with keep-alive
 * comments and a maximum duration, written no faster than the client reads. A call
 * that stays open takes one of its key's slots and re-checks its caller each time it
 * wakes (ProtocolGate): one that lost its standing ends with that check's error.
 */
@Injectable()
export class ProtocolService {
  private readonly v1: JsonRpcTransportHandler;
  private readonly v03: LegacyJsonRpcTransportHandler;

  constructor(
    private readonly gate: ProtocolGate,
    handler: LedgerRequestHandler,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    metrics: Metrics,
  ) {
    const metered = meteredHandler(handler, 'jsonrpc', metrics);
    this.v1 = new JsonRpcTransportHandler(metered);
    this.v03 = new LegacyJsonRpcTransportHandler(metered);
  }

  async call(principal: AgentKeyPrincipal, handle: string, req: Request, res: Response): Promise<void> {
    const admitted = await this.gate.admit(principal, handle);

    const body: unknown = req.body;
    const id = rpcId(body);
    const version = a2aVersion(req.header('a2a-version'));
    if (!version) {
      const error = new VersionNotSupportedError(
        'This service speaks A2A 1.0 (A2A-Version: 1.0) and 0.3 (A2A-Version: 0.3 or no header).',
      );
      res.status(200).json(rpcError(id, JsonRpcTransportHandler.mapToJSONRPCError(error)));
      return;
    }
    const invalid = envelopeProblem(body);
    if (invalid) {
      res.status(200).json(rpcError(id, { code: A2A_ERROR_CODE.INVALID_REQUEST, message: invalid }));
      return;
    }

    const { method, params } = body as { method: string; params?: unknown };
    if (!isA2AMethod(version, method)) {
      res.status(200).json(rpcError(id, { code: A2A_ERROR_CODE.METHOD_NOT_FOUND, message: 'Method not found.' }));
      return;
    }
    // A client's mistake: -32602 naming the member, before the SDK reads (and trips over) the params.
    const problems = paramsErrors(version, method, params);
    if (problems.length > 0) {
      this.logger.debug({ method, errors: problems }, 'protocol params refused');
      res
        .status(200)
        .json(rpcError(id, errorMapper(version)(new RequestMalformedError(problems.map((p) => p.message).join('; ')))));
      return;
    }
    // After the method and params: a request without an id gets their specific error first (envelopeProblem).
    if (id === null) {
      res.status(200).json(rpcError(null, { code: A2A_ERROR_CODE.INVALID_REQUEST, message: ID_REQUIRED }));
      return;
    }

    const waits = blocking(version, params);
    const open = this.gate.start(principal, admitted, {
      version,
      blocking: waits,
      staysOpen: staysOpen(version, method, waits),
    });
    res.on('close', () => open.abort());
    try {
      await inSpan(
        `a2a ${method}`,
        { attributes: { 'rpc.system': 'jsonrpc', 'rpc.method': method, 'a2a.version': version } },
        async () => {
          const result = await (version === '1.0' ? this.v1 : this.v03).handle(
            body as Record<string, unknown>,
            open.context,
          );
          if (Symbol.asyncIterator in result) {
            await this.stream(req, res, result, { id, version, alwaysSse: alwaysSse(version, method) }, open);
          }
          // A blocking send that lost its standing answers as the failed check would (the SDK saw an internal error).
          else if (open.call.standing.refusal) {
            throw open.call.standing.refusal;
          } else {
            res.status(200).json(this.withoutInternals(result));
          }
        },
      );
    } finally {
      open.end();
    }
  }

  /**
   * An internal error (-32603) never carries its own text to the caller: the handler
   * already replaces its own failures, but the SDK's transport maps an exception thrown
   * by its own code (a TypeError in a translator) with the exception's message. One
   * that gets here is a shape the params checks missed, so it is logged as an error.
   */
  private withoutInternals(response: RpcResponse): RpcResponse {
    const error = response.error as RpcError | undefined;
    if (error?.code !== A2A_ERROR_CODE.INTERNAL_ERROR || error.message === INTERNAL_MESSAGE) {
      return response;
    }
    this.logger.error({ error: error.message }, 'protocol call failed inside the SDK');
    return { ...response, error: { code: error.code, message: INTERNAL_MESSAGE } };
  }

  /**
   * SSE as the SDK's express transport frames it (`data: <JSON-RPC response>`, errors
   * as `event: error`). An error before the first event is a plain JSON-RPC error
   * (HTTP 200), so that, for example, subscribing to a terminal task answers -32004 —
   * except v0.3 `tasks/resubscribe`, which always answers as SSE, its method errors as
   * the stream's one event (as the SDK's router does). A lost standing is the checks'
   * JSON-RPC error body (with `data.reason`), as an HTTP error before the first event
   * and as the last event after it.
   */
  private async stream(
    req: Request,
    res: Response,
    events: AsyncGenerator<RpcResponse>,
    call: { id: RpcId; version: A2AVersion; alwaysSse: boolean },
    open: OpenCall,
  ): Promise<void> {
    const { id, version } = call;
    const mapError = (error: unknown) =>
      this.withoutInternals(rpcError(id, errorMapper(version)(error))).error as RpcError;
    let first: IteratorResult<RpcResponse>;
    try {
      first = await events.next();
    } catch (error) {
      if (error instanceof CallRefused) {
        throw error.refusal;
      }
      if (!call.alwaysSse) {
        res.status(200).json(rpcError(id, mapError(error)));
        return;
      }
      openSse(res);
      res.end(formatSSEErrorEvent(rpcError(id, mapError(error))));
      return;
    }
    openSse(res);
    // A keep-alive is skipped while the client has not read what it was sent.
    const keepAlive = setInterval(
      () => res.writable && !res.writableNeedDrain && res.write(': keep-alive\n\n'),
      this.config.sseKeepaliveMs,
    );
    const maxDuration = setTimeout(() => open.abort(), this.config.sseMaxDurationMs);
    try {
      for (let next = first; !next.done; next = await events.next()) {
        await writeFrame(res, formatSSEEvent(next.value), open.call.signal);
      }
    } catch (error) {
      if (open.call.signal.aborted) {
        return;
      }
      res.write(
        formatSSEErrorEvent(
          error instanceof CallRefused ? jsonRpcErrorBody(req, error.refusal) : rpcError(id, mapError(error)),
        ),
      );
    } finally {
      clearInterval(keepAlive);
      clearTimeout(maxDuration);
      // A stream left while it waited for the client ends here (its ledger watch closes).
      await events.return(undefined);
      res.end();
    }
  }
}

const INTERNAL_MESSAGE = 'An unexpected error occurred.';

function errorMapper(version: A2AVersion): (error: unknown) => RpcError {
  return version === '1.0'
    ? JsonRpcTransportHandler.mapToJSONRPCError
    : LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError;
}

/** The headers of an SSE answer; they go out with its first event, in one write (each event is ready when this is called). */
function openSse(res: Response): void {
  res.status(200);
  for (const [name, value] of Object.entries(SSE_HEADERS)) {
    res.setHeader(name, value);
  }
}

/** v0.3 `tasks/resubscribe` answers as SSE whatever happens, as the SDK's JSON-RPC router does. */
function alwaysSse(version: A2AVersion, method: string): boolean {
  return version === '0.3' && method === 'tasks/resubscribe';
}

/**
 * Missing → 0.3 (docs/api.md §5); 0.3 and 1.0 are spoken; anything else is not. A patch
 * number is ignored (A2A v1.0 §3.6: it MUST not be considered in negotiation).
 */
function a2aVersion(header: string | undefined): A2AVersion | null {
  return spokenVersion(header ?? '0.3');
}

/** The methods that stay open: streams always, sends while they block for the worker. */
const OPEN_METHODS: Record<A2AVersion, { streams: readonly string[]; send: string }> = {
  '1.0': { streams: ['SendStreamingMessage', 'SubscribeToTask'], send: 'SendMessage' },
  '0.3': { streams: ['message/stream', 'tasks/resubscribe'], send: 'message/send' },
};

function staysOpen(version: A2AVersion, method: string, blocks: boolean): boolean {
  const open = OPEN_METHODS[version];
  return open.streams.includes(method) || (blocks && method === open.send);
}

/** Whether a send with these params blocks: v1.0 sends unless `returnImmediately`; v0.3 sends unless `blocking: false`. */
export function blocking(version: A2AVersion, params: unknown): boolean {
  const configuration = (params as { configuration?: { returnImmediately?: unknown; blocking?: unknown } } | undefined)
    ?.configuration;
  return version === '1.0' ? configuration?.returnImmediately !== true : configuration?.blocking !== false;
}

/**
 * JSON-RPC 2.0 §4: one request object (no batches) with `jsonrpc: "2.0"`, a method name,
 * and an id that, when given, is a string or an integer (the v0.3 schema's request
 * types; v1.0 §9.3). A request without an id (or with `id: null`) passes here: the
 * method and its params are checked first, as the A2A TCK expects (-32601, -32602 with
 * `"id": null`), and only then is it refused for its missing id (ID_REQUIRED).
 */
function envelopeProblem(body: unknown): string | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return 'The body must be one JSON-RPC 2.0 request object.';
  }
  const request = body as { jsonrpc?: unknown; method?: unknown; id?: unknown };
  if (request.jsonrpc !== '2.0') {
    return 'jsonrpc must be "2.0".';
  }
  if (typeof request.method !== 'string' || request.method === '') {
    return 'method must be a non-empty string.';
  }
  if (request.id === undefined || request.id === null) {
    return null;
  }
  if (typeof request.id !== 'string' && !Number.isInteger(request.id)) {
    return 'id must be a string or an integer.';
  }
  return null;
}

/** A2A has no notifications: a request without an id is not run, whatever it asks. */
const ID_REQUIRED = 'id is required: A2A requests carry a string or integer id (notifications are not part of A2A).';

function rpcId(body: unknown): RpcId {
  const id = (body as { id?: unknown } | null | undefined)?.id;
  return typeof id === 'string' || Number.isInteger(id) ? (id as string | number) : null;
}

function rpcError(id: RpcId, error: RpcError): RpcResponse {
  return { jsonrpc: '2.0', id, error };
}

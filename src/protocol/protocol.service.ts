import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { formatSSEErrorEvent, formatSSEEvent, SSE_HEADERS } from '@a2a-js/sdk';
import { A2A_ERROR_CODE, VersionNotSupportedError } from '@a2a-js/sdk/errors';
import { JsonRpcTransportHandler } from '@a2a-js/sdk/server';
import { LegacyJsonRpcTransportHandler } from '@a2a-js/sdk/compat/v0_3/server';
import type { Request, Response } from 'express';
import type { AgentKeyPrincipal } from '../auth/principal';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { AdmissionService } from '../admission/admission.service';
import { AppError, forbidden, notFound } from '../common/app-error';
import { jsonRpcErrorBody } from '../common/problem.filter';
import { isHandle } from '../identities/handle';
import { IdentitiesService } from '../identities/identities.service';
import { KeysService } from '../keys/keys.service';
import type { A2AVersion } from '../ledger/entities/push-notification-config.entity';
import type { TaskPair } from '../ledger/ledger.service';
import { callContext } from './call-context';
import { CallRefused, CallStanding, lostStanding } from './call-standing';
import { LedgerRequestHandler } from './ledger-request-handler';
import { OpenCalls } from '../limits/open-calls';
import { writeFrame } from './sse';

type RpcId = string | number | null;
type RpcResponse = { jsonrpc: string; id: RpcId; result?: unknown; error?: unknown };
type RpcError = { code: number; message: string; data?: unknown };

/**
 * `POST /a2a/{handle}` (CONTRACT §5). The guard has done check 1 up to the claimed
 * agent key; this service does the rest in order — the caller's own receiver enabled,
 * the worker servable, admission — as HTTP errors with a JSON-RPC body, then
 * picks the A2A generation from `A2A-Version` and hands the call to the SDK's
 * JSON-RPC transport handler of that generation, which validates the method and its
 * params, calls LedgerRequestHandler and shapes the result. Method-level errors are
 * JSON-RPC errors with HTTP 200. Streams are written here as SSE, with keep-alive
 * comments and a maximum duration, written no faster than the client reads. A call
 * that stays open takes one of its key's slots (`openCalls`) and re-checks its caller
 * each time it wakes (`standing`): one that lost its standing ends with that check's error.
 */
@Injectable()
export class ProtocolService implements OnModuleDestroy {
  private readonly v1: JsonRpcTransportHandler;
  private readonly v03: LegacyJsonRpcTransportHandler;
  private readonly inFlight = new Set<AbortController>();

  constructor(
    private readonly identities: IdentitiesService,
    private readonly admission: AdmissionService,
    private readonly keys: KeysService,
    handler: LedgerRequestHandler,
    private readonly openCalls: OpenCalls,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.v1 = new JsonRpcTransportHandler(handler);
    this.v03 = new LegacyJsonRpcTransportHandler(handler);
  }

  /** Shutdown: streams end and blocking sends return the task as it is. */
  onModuleDestroy(): void {
    for (const call of this.inFlight) call.abort();
  }

  async call(principal: AgentKeyPrincipal, handle: string, req: Request, res: Response): Promise<void> {
    if (!principal.identity.enabled) {
      throw forbidden('requester_disabled', 'Your identity\'s receiver is disabled; only enabled identities may send work.');
    }
    // A segment that cannot be a handle names nobody, and never reaches the database.
    const { requester, worker } = isHandle(handle)
      ? await this.identities.findCallParties(principal.identity.id, handle)
      : { requester: null, worker: null };
    if (!worker) throw notFound('worker_not_found', 'No enabled, claimed identity has that handle.');
    // The caller learns only that admission said no; the decision is recorded for each side's administrators.
    if (!(await this.admission.evaluate(requester!, worker)).allowed) {
      throw forbidden('admission_denied', 'This call is not admitted between these two identities.');
    }

    const body: unknown = req.body;
    const id = rpcId(body);
    const version = a2aVersion(req.header('a2a-version'));
    if (!version) {
      const error = new VersionNotSupportedError('This service speaks A2A 1.0 (A2A-Version: 1.0) and 0.3 (A2A-Version: 0.3 or no header).');
      res.status(200).json(rpcError(id, JsonRpcTransportHandler.mapToJSONRPCError(error)));
      return;
    }
    const invalid = envelopeProblem(body);
    if (invalid) {
      res.status(200).json(rpcError(id, { code: A2A_ERROR_CODE.INVALID_REQUEST, message: invalid }));
      return;
    }

    const waits = blocking(version, body as { params?: unknown });
    const release = staysOpen(version, (body as { method: string }).method, waits) ? this.openCalls.take(principal.id) : () => undefined;
    if (!release) {
      throw new AppError(429, 'too_many_open_calls',
        `This API key already has ${this.config.protocolMaxOpenCallsPerKey} streams and blocking sends open; wait for one to end.`);
    }
    const abort = new AbortController();
    this.inFlight.add(abort);
    res.on('close', () => abort.abort());
    try {
      const pair: TaskPair = {
        requester: { id: principal.identity.id, handle: principal.identity.handle, organizationId: principal.organizationId! },
        worker: { id: worker.id, handle: worker.agentHandle, organizationId: worker.organizationId! },
      };
      const standing = new CallStanding(() => this.standing(principal.id, pair));
      const context = callContext({ pair, version, blocking: waits, signal: abort.signal, standing });
      const result = await (version === '1.0' ? this.v1 : this.v03).handle(body as Record<string, unknown>, context);
      if (Symbol.asyncIterator in result) await this.stream(req, res, result, id, version, abort);
      // A blocking send that lost its standing answers as the failed check would (the SDK saw an internal error).
      else if (standing.refusal) throw standing.refusal;
      else res.status(200).json(result);
    } finally {
      this.inFlight.delete(abort);
      release();
    }
  }

  /**
   * The open call's checks, asked again: the key (the guard's), both identities and
   * admission (without recording a denial; the call was admitted). Three indexed reads.
   */
  private async standing(keyId: string, pair: TaskPair): Promise<AppError | null> {
    const [active, identities] = await Promise.all([this.keys.isActive(keyId), this.identities.findByIds([pair.requester.id, pair.worker.id])]);
    const requester = identities.find((identity) => identity.id === pair.requester.id);
    const worker = identities.find((identity) => identity.id === pair.worker.id);
    // Identity rows are never deleted; were one missing, the call would have nobody to serve.
    const decision = active && requester && worker ? await this.admission.decide(requester, worker) : UNAVAILABLE;
    return lostStanding(active, decision);
  }

  /**
   * SSE as the SDK's express transport frames it (`data: <JSON-RPC response>`, errors
   * as `event: error`). An error before the first event is a plain JSON-RPC error
   * (HTTP 200), so that, for example, subscribing to a terminal task answers -32004.
   * A lost standing is the checks' JSON-RPC error body (with `data.reason`), as an
   * HTTP error before the first event and as the last event after it.
   */
  private async stream(req: Request, res: Response, events: AsyncGenerator<RpcResponse>, id: RpcId, version: A2AVersion, abort: AbortController): Promise<void> {
    const mapError = version === '1.0' ? JsonRpcTransportHandler.mapToJSONRPCError : LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError;
    let first: IteratorResult<RpcResponse>;
    try {
      first = await events.next();
    } catch (error) {
      if (error instanceof CallRefused) throw error.refusal;
      res.status(200).json(rpcError(id, mapError(error)));
      return;
    }
    res.status(200);
    for (const [name, value] of Object.entries(SSE_HEADERS)) res.setHeader(name, value);
    res.flushHeaders();
    // A keep-alive is skipped while the client has not read what it was sent.
    const keepAlive = setInterval(() => res.writable && !res.writableNeedDrain && res.write(': keep-alive\n\n'), this.config.sseKeepaliveMs);
    const maxDuration = setTimeout(() => abort.abort(), this.config.sseMaxDurationMs);
    try {
      for (let next = first; !next.done; next = await events.next()) await writeFrame(res, formatSSEEvent(next.value), abort.signal);
    } catch (error) {
      if (abort.signal.aborted) return;
      res.write(formatSSEErrorEvent(error instanceof CallRefused ? jsonRpcErrorBody(req, error.refusal) : rpcError(id, mapError(error))));
    } finally {
      clearInterval(keepAlive);
      clearTimeout(maxDuration);
      // A stream left while it waited for the client ends here (its ledger watch closes).
      await events.return(undefined);
      res.end();
    }
  }
}

/** Standing of a call whose identity rows are gone. */
const UNAVAILABLE = { allowed: false, reason: 'worker_unavailable' } as const;

/** Missing → 0.3 (CONTRACT §5); 0.3 and 1.0 are spoken; anything else is not. */
function a2aVersion(header: string | undefined): A2AVersion | null {
  const value = header === undefined ? '0.3' : header.trim();
  return value === '0.3' || value === '1.0' ? value : null;
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

/** v1.0 sends block unless `returnImmediately`; v0.3 sends block unless `blocking: false`. */
function blocking(version: A2AVersion, body: { params?: unknown }): boolean {
  const configuration = (body.params as { configuration?: { returnImmediately?: unknown; blocking?: unknown } } | undefined)?.configuration;
  return version === '1.0' ? configuration?.returnImmediately !== true : configuration?.blocking !== false;
}

/** JSON-RPC 2.0 §4: one request object (no batches) with `jsonrpc: "2.0"`, a method name and a valid id. */
function envelopeProblem(body: unknown): string | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'The body must be one JSON-RPC 2.0 request object.';
  const request = body as { jsonrpc?: unknown; method?: unknown; id?: unknown };
  if (request.jsonrpc !== '2.0') return 'jsonrpc must be "2.0".';
  if (typeof request.method !== 'string' || request.method === '') return 'method must be a non-empty string.';
  if ('id' in request && request.id !== null && typeof request.id !== 'string' && !Number.isInteger(request.id)) {
    return 'id must be a string, an integer or null.';
  }
  return null;
}

function rpcId(body: unknown): RpcId {
  const id = (body as { id?: unknown } | null | undefined)?.id;
  return typeof id === 'string' || Number.isInteger(id) ? (id as string | number) : null;
}

function rpcError(id: RpcId, error: RpcError): RpcResponse {
  return { jsonrpc: '2.0', id, error };
}

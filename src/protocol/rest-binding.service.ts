import { once } from 'node:events';
import { Inject, Injectable } from '@nestjs/common';
import { formatSSEErrorEvent } from '@a2a-js/sdk';
import { restStatusFor, toRestErrorBody, VersionNotSupportedError } from '@a2a-js/sdk/errors';
import type { User } from '@a2a-js/sdk/server';
import { restHandler } from '@a2a-js/sdk/server/express';
import type { Request, RequestHandler, Response } from 'express';
import type { AgentKeyPrincipal } from '../auth/principal';
import { notFound, type AppError } from '../common/app-error';
import { jsonRpcErrorBody, restBindingErrorBody, restBindingVersion, sendRestBindingError, toAppError } from '../common/problem.filter';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { Metrics } from '../metrics/metrics';
import { meteredHandler } from './metered-handler';
import { bindHooks, BindingRequestHandler } from './binding-handler';
import { LedgerRequestHandler } from './ledger-request-handler';
import { ProtocolGate, type OpenCall } from './protocol-gate';
import { blocking } from './protocol.service';

/** What a route of the binding does: a send (open while it blocks), a stream (always open), anything else. */
export type RestCallKind = 'send' | 'stream' | 'unary';

/** The SDK's view of the caller: the admitted call, handed from `serve` to the context builder. */
class AdmittedCaller implements User {
  constructor(readonly open: OpenCall) {}
  get isAuthenticated(): boolean {
    return true;
  }
  get userName(): string {
    return this.open.call.pair.requester.handle;
  }
}

/**
 * The HTTP+JSON binding (CONTRACT §5): the SDK's `restHandler` with `legacyCompat`
 * (v1.0 routes, and v0.3's under `/v1`), over the same LedgerRequestHandler as the
 * JSON-RPC endpoint. The guard has checked the credential and spent the protocol
 * quota; ProtocolGate makes the remaining checks and holds the open-call slot; this
 * service renders their errors in the binding's form, adds SSE keep-alives and a
 * maximum duration to streams, and hands the request to the SDK's router.
 */
@Injectable()
export class RestBindingService {
  private readonly router: RequestHandler;
  private readonly admitted = new WeakMap<Request, OpenCall>();

  constructor(
    private readonly gate: ProtocolGate,
    ledger: LedgerRequestHandler,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    metrics: Metrics,
  ) {
    this.router = restHandler({
      requestHandler: new BindingRequestHandler(meteredHandler(ledger, 'rest', metrics)),
      userBuilder: async (req) => new AdmittedCaller(this.admitted.get(req as Request)!),
      contextBuilder: ({ user }) => (user as AdmittedCaller).open.context,
      legacyCompat: { enabled: true },
    });
  }

  async serve(principal: AgentKeyPrincipal, handle: string, kind: RestCallKind, req: Request, res: Response): Promise<void> {
    const pair = await this.gate.admit(principal, handle);
    const version = restBindingVersion(req);
    if (!version) {
      const error = new VersionNotSupportedError('This service speaks A2A 1.0 (A2A-Version: 1.0) and 0.3 (A2A-Version: 0.3 or no header).');
      res.status(restStatusFor(error)).json(toRestErrorBody(error, restStatusFor(error)));
      return;
    }
    const waits = kind === 'send' && blocking(version, { params: req.body });
    const open = this.gate.start(principal, pair, { version, blocking: waits, staysOpen: kind === 'stream' || waits });
    bindHooks(open.context, {
      refuse: (refusal) => this.refuse(req, res, refusal),
      ready: async (signal) => {
        if (res.writableNeedDrain) await once(res, 'drain', { signal });
      },
    });
    this.admitted.set(req, open);
    const timers = kind === 'stream' ? this.streamTimers(res, open) : [];
    try {
      await this.route(req, res, open);
    } finally {
      for (const timer of timers) clearTimeout(timer);
      open.end();
    }
  }

  /** The SDK's router, with the request's path made relative to `{base}/a2a/{handle}/rest`; resolves when the response is done. */
  private route(req: Request, res: Response, open: OpenCall): Promise<void> {
    return new Promise((resolve, reject) => {
      res.on('close', () => {
        open.abort();
        resolve();
      });
      const query = req.originalUrl.indexOf('?');
      req.url = req.path.replace(/^\/a2a\/[^/]+\/rest/, '') + (query >= 0 ? req.originalUrl.slice(query) : '');
      this.router(req, res, (error?: unknown) => {
        // Nothing in the SDK's router took the request (a route this service declares but the SDK does not serve).
        if (!res.headersSent) reject(error ? toAppError(error) : notFound('not_found', 'No such route.'));
      });
    });
  }

  /** Keep-alive comments while the stream is open (once the SDK has started it), and its maximum duration. */
  private streamTimers(res: Response, open: OpenCall): NodeJS.Timeout[] {
    const streaming = () => res.headersSent && String(res.getHeader('content-type')).startsWith('text/event-stream');
    // A keep-alive is skipped while the client has not read what it was sent.
    const keepAlive = setInterval(() => {
      if (streaming() && res.writable && !res.writableNeedDrain) res.write(': keep-alive\n\n');
    }, this.config.sseKeepaliveMs);
    return [keepAlive, setTimeout(() => open.abort(), this.config.sseMaxDurationMs)];
  }

  /**
   * A call that lost its standing answers as the failed check would: an HTTP error in
   * the binding's form before the response started, the same body as the stream's
   * last (`error`) event after it.
   */
  private refuse(req: Request, res: Response, refusal: AppError): Error | null {
    if (!res.headersSent) {
      sendRestBindingError(req, res, refusal);
      // The SDK's transport sees a response already sent, and leaves it.
      return new Error(refusal.detail);
    }
    const body = restBindingVersion(req) === '0.3' ? jsonRpcErrorBody(req, refusal).error : restBindingErrorBody(req, refusal);
    res.end(formatSSEErrorEvent(body));
    return null;
  }
}

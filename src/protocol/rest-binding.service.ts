import { once } from 'node:events';
import { Inject, Injectable } from '@nestjs/common';
import { formatSSEErrorEvent } from '@a2a-js/sdk';
import {
  A2A_ERROR_CODE,
  A2A_ERROR_DOMAIN,
  RequestMalformedError,
  restStatusFor,
  toRestErrorBody,
  VersionNotSupportedError,
} from '@a2a-js/sdk/errors';
import { restHandler } from '@a2a-js/sdk/server/express';
import type { Request, RequestHandler, Response } from 'express';
import type { AgentKeyPrincipal } from '../common/principal';
import { notFound, type AppError } from '../common/app-error';
import {
  jsonRpcErrorBody,
  restBindingErrorBody,
  restBindingVersion,
  sendRestBindingError,
  toAppError,
} from '../common/problem.filter';
import { APP_CONFIG, type AppConfig } from '../config/config';
import type { FieldError } from '../common/app-error';
import { requestErrors, V03_REST_REQUESTS, V1_REQUESTS } from './a2a-params';
import { Metrics } from '../metrics/metrics';
import { keepRouteLabel } from '../metrics/http-metrics';
import { meteredHandler } from './metered-handler';
import { bindHooks, BindingRequestHandler } from './binding-handler';
import { LedgerRequestHandler } from './ledger-request-handler';
import { ProtocolGate, type OpenCall } from './protocol-gate';
import { admittedCallers } from './admitted-caller';
import { blocking } from './protocol.service';
import { inSpan } from '../tracing/tracing';

/** What a route of the binding does: a send (open while it blocks), a stream (always open), anything else. */
export type RestCallKind = 'send' | 'stream' | 'unary';

/**
 * The HTTP+JSON binding (docs/api.md §5): the SDK's `restHandler` with `legacyCompat`
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
      ...admittedCallers(this.admitted),
      legacyCompat: { enabled: true },
    });
  }

  async serve(
    principal: AgentKeyPrincipal,
    handle: string,
    kind: RestCallKind,
    req: Request,
    res: Response,
  ): Promise<void> {
    const admitted = await this.gate.admit(principal, handle);
    const version = restBindingVersion(req);
    if (version !== '0.3') {
      withProblemTypes(res);
    }
    if (!version) {
      const error = new VersionNotSupportedError(
        'This service speaks A2A 1.0 (A2A-Version: 1.0) and 0.3 (A2A-Version: 0.3 or no header).',
      );
      res.status(restStatusFor(error)).json(toRestErrorBody(error, restStatusFor(error)));
      return;
    }
    // A client's mistake: the binding's invalid-params error naming the member, before the SDK decodes (and coerces) the body.
    const problems = bodyErrors(version, req);
    if (problems.length > 0) {
      const error = new RequestMalformedError(problems.map((p) => p.message).join('; '));
      if (version === '1.0') {
        res.status(400).json(toRestErrorBody(error, 400));
      } else {
        res.status(400).json({ code: A2A_ERROR_CODE.INVALID_PARAMS, message: error.message });
      }
      return;
    }
    const waits = kind === 'send' && blocking(version, req.body);
    const open = this.gate.start(principal, admitted, {
      version,
      blocking: waits,
      staysOpen: kind === 'stream' || waits,
    });
    bindHooks(open.context, {
      refuse: (refusal) => this.refuse(req, res, refusal),
      ready: async (signal) => {
        if (res.writableNeedDrain) {
          await once(res, 'drain', { signal });
        }
      },
    });
    this.admitted.set(req, open);
    const timers = kind === 'stream' ? this.streamTimers(res, open) : [];
    try {
      await inSpan(`a2a rest ${kind}`, { attributes: { 'rpc.system': 'a2a-http-json', 'a2a.version': version } }, () =>
        this.route(req, res, open),
      );
    } finally {
      for (const timer of timers) {
        clearTimeout(timer);
      }
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
      // The SDK's router replaces `req.route` with its own, relative one; the metrics keep the service's.
      keepRouteLabel(req);
      const query = req.originalUrl.indexOf('?');
      req.url = req.path.replace(/^\/a2a\/[^/]+\/rest/, '') + (query >= 0 ? req.originalUrl.slice(query) : '');
      this.router(req, res, (error?: unknown) => {
        // Nothing in the SDK's router took the request (a route this service declares but the SDK does not serve).
        if (!res.headersSent) {
          reject(error ? toAppError(error) : notFound('not_found', 'No such route.'));
        }
      });
    });
  }

  /** Keep-alive comments while the stream is open (once the SDK has started it), and its maximum duration. */
  private streamTimers(res: Response, open: OpenCall): NodeJS.Timeout[] {
    const streaming = () => res.headersSent && String(res.getHeader('content-type')).startsWith('text/event-stream');
    // A keep-alive is skipped while the client has not read what it was sent.
    const keepAlive = setInterval(() => {
      if (streaming() && res.writable && !res.writableNeedDrain) {
        res.write(': keep-alive\n\n');
      }
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
    const body =
      restBindingVersion(req) === '0.3' ? jsonRpcErrorBody(req, refusal).error : restBindingErrorBody(req, refusal);
    res.end(formatSSEErrorEvent(body));
    return null;
  }
}

/**
 * What is wrong with the body of a route that takes one (docs/api.md §5, as the JSON-RPC
 * params check): each problem names its member, `body.…`. The other routes' path
 * and query parameters are checked by the SDK's router and the handler.
 */
function bodyErrors(version: '1.0' | '0.3', req: Request): FieldError[] {
  if (req.method !== 'POST') {
    return [];
  }
  const route = req.path.replace(/^\/a2a\/[^/]+\/rest\//, '');
  const body: unknown = req.body;
  if (version === '1.0') {
    if (/^message:(send|stream)$/.test(route)) {
      return requestErrors(V1_REQUESTS.SendMessageRequest, body, 'body');
    }
    const config = /^tasks\/([^/]+)\/pushNotificationConfigs$/.exec(route);
    if (config) {
      const isObject = typeof body === 'object' && body !== null && !Array.isArray(body);
      return isObject
        ? requestErrors(
            V1_REQUESTS.TaskPushNotificationConfig,
            { ...body, taskId: decodeURIComponent(config[1]) },
            'body',
          )
        : [{ field: 'body', message: 'body must be an object' }];
    }
    return [];
  }
  if (/^v1\/message:(send|stream)$/.test(route)) {
    return requestErrors(V03_REST_REQUESTS.SendMessageRequest, body, 'body');
  }
  if (/^v1\/tasks\/[^/]+\/pushNotificationConfigs$/.test(route)) {
    return requestErrors(V03_REST_REQUESTS.TaskPushNotificationConfig, body, 'body');
  }
  return [];
}

/**
 * A2A v1.0 §5.4 / §11.6: the problem `type` URI of each A2A error on the HTTP+JSON
 * binding, by its ErrorInfo reason. Invalid params (a client's malformed request) has
 * no row in the specification's table, so it keeps no `type` of its own.
 */
export const A2A_PROBLEM_TYPES: Record<string, string> = {
  TASK_NOT_FOUND: 'https://a2a-protocol.org/errors/task-not-found',
  TASK_NOT_CANCELABLE: 'https://a2a-protocol.org/errors/task-not-cancelable',
  PUSH_NOTIFICATION_NOT_SUPPORTED: 'https://a2a-protocol.org/errors/push-notification-not-supported',
  UNSUPPORTED_OPERATION: 'https://a2a-protocol.org/errors/unsupported-operation',
  CONTENT_TYPE_NOT_SUPPORTED: 'https://a2a-protocol.org/errors/content-type-not-supported',
  INVALID_AGENT_RESPONSE: 'https://a2a-protocol.org/errors/invalid-agent-response',
  EXTENDED_AGENT_CARD_NOT_CONFIGURED: 'https://a2a-protocol.org/errors/extended-agent-card-not-configured',
  EXTENSION_SUPPORT_REQUIRED: 'https://a2a-protocol.org/errors/extension-support-required',
  VERSION_NOT_SUPPORTED: 'https://a2a-protocol.org/errors/version-not-supported',
};

/**
 * The v1.0 binding's A2A errors, as the SDK's router writes them (`{"error":
 * google.rpc.Status}`, which the SDK's clients read), become RFC 9457 problem+json
 * with the specification's `type` URI, `title`, `status` and `detail` beside `error`.
 */
function withProblemTypes(res: Response): void {
  const json = res.json.bind(res);
  res.json = (body: unknown) => {
    const status = (
      body as { error?: { message?: unknown; details?: Array<{ reason?: unknown; domain?: unknown }> } } | null
    )?.error;
    const reason = status?.details?.find((detail) => detail.domain === A2A_ERROR_DOMAIN)?.reason;
    const type = res.statusCode >= 400 && typeof reason === 'string' ? A2A_PROBLEM_TYPES[reason] : undefined;
    if (!type || typeof reason !== 'string') {
      return json(body);
    }
    res.type('application/problem+json');
    return json({ type, title: titleOf(reason), status: res.statusCode, detail: status?.message, ...(body as object) });
  };
}

/** `TASK_NOT_FOUND` → `Task Not Found`. */
function titleOf(reason: string): string {
  return reason
    .toLowerCase()
    .split('_')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join(' ');
}

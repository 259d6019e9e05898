import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { Readable, Transform } from 'node:stream';
import type { AppConfig } from '../config/config';
import { withTimeout } from '../database/with-timeout';
import { classifyAddress, hostOf } from '../events/address-policy';
import { traceHeaders } from '../tracing/tracing';
import type { HostResolver, ResolvedAddress } from '../events/delivery-sender';

/**
 * Why an upstream could not be reached, in words fit for a task's status message:
 * never a resolved address, never a stack.
 */
export class UpstreamUnreachable extends Error {}

/** The address rules refuse the upstream's URL: a retry would be refused the same way, so the forward fails at once. */
export class UpstreamRefused extends UpstreamUnreachable {}

/**
 * The one refusal of a host name, whether it does not resolve or resolves to an address
 * the rules refuse: telling them apart would tell a tenant what the service's resolver
 * knows of internal names (the webhooks' DESTINATION_NOT_ALLOWED, likewise).
 */
const NOT_ALLOWED = 'its host name does not resolve to an allowed address';

export interface UpstreamFetchOptions {
  allowPrivateNetworks: boolean;
  resolve: HostResolver;
  /** Until the response's headers have arrived. */
  timeoutMs: number;
  /** The most a response body may hold (a stream counts all its events). */
  maxResponseBytes: number;
}

/** The configuration every upstream call obeys (the webhooks' address rules, UPSTREAM_* limits). */
export type UpstreamFetchConfig = Pick<AppConfig, 'webhooksAllowPrivateNetworks' | 'upstream'>;

/** upstreamFetch as the configuration sets it up: the forwarder's clients and card reads share it. */
export function configuredUpstreamFetch(config: UpstreamFetchConfig, resolve: HostResolver): typeof fetch {
  return upstreamFetch({
    allowPrivateNetworks: config.webhooksAllowPrivateNetworks,
    resolve,
    timeoutMs: config.upstream.timeoutMs,
    maxResponseBytes: config.upstream.maxResponseBytes,
  });
}

const NETWORK_ERRORS: Record<string, string> = {
  ECONNREFUSED: 'the connection was refused',
  ECONNRESET: 'the connection was reset',
  EAI_AGAIN: 'its host name could not be resolved',
  EHOSTUNREACH: 'its host is unreachable',
  ENETUNREACH: 'its network is unreachable',
  ETIMEDOUT: 'the connection timed out',
  EPIPE: 'the connection was closed',
  CERT_HAS_EXPIRED: 'its TLS certificate has expired',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'its TLS certificate is not trusted',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'its TLS certificate is not trusted',
  ERR_TLS_CERT_ALTNAME_INVALID: 'its TLS certificate does not match its name',
};

/**
 * A `fetch` for the SDK's client that obeys the webhook URL rules (docs/api.md §8,
 * address-policy.ts): https only (http too with WEBHOOKS_ALLOW_PRIVATE_NETWORKS), every
 * resolved address public, and the connection pinned to the vetted address so a name
 * cannot resolve one way for the check and another for the connection. Redirects are
 * not followed (a 3xx is an error); the response headers must come within the
 * timeout and the body may not exceed the size limit. Sends only the headers the
 * client sets — nothing of the requester's call reaches the upstream.
 */
export function upstreamFetch(options: UpstreamFetchOptions): typeof fetch {
  const agents = { 'http:': new http.Agent({ keepAlive: true }), 'https:': new https.Agent({ keepAlive: true }) };
  return (async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
    const target = await vetUpstream(url, options);
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((value, name) => (headers[name] = value));
    const body = typeof init?.body === 'string' ? init.body : init?.body ? String(init.body) : undefined;
    if (body !== undefined) {
      headers['content-length'] = String(Buffer.byteLength(body));
    }
    const pinned: LookupFunction = (_hostname, lookupOptions, callback) => {
      if (lookupOptions.all) {
        (callback as (err: null, addresses: ResolvedAddress[]) => void)(null, [target]);
      } else {
        callback(null, target.address, target.family);
      }
    };
    const transport = url.protocol === 'https:' ? https : http;
    const res = await new Promise<IncomingMessage>((resolve, reject) => {
      const timer = setTimeout(
        () => req.destroy(new UpstreamUnreachable(`no answer within ${options.timeoutMs} ms`)),
        options.timeoutMs,
      );
      const req = transport.request(
        url,
        {
          method: init?.method ?? 'GET',
          agent: agents[url.protocol as 'http:' | 'https:'],
          lookup: pinned,
          headers: { 'user-agent': 'a2a-service-forwarder/1', ...traceHeaders(), ...headers },
        },
        (response) => {
          clearTimeout(timer);
          resolve(response);
        },
      );
      // Headers and body go out at once (no Nagle delay waiting for the peer's delayed ACK).
      req.setNoDelay(true);
      // Listening until the response is done only: a forward's signal serves many calls (its polls).
      const onAbort = () => req.destroy(new UpstreamUnreachable('the call was aborted'));
      init?.signal?.addEventListener('abort', onAbort, { once: true });
      req.on('close', () => init?.signal?.removeEventListener('abort', onAbort));
      req.on('error', (error) => {
        clearTimeout(timer);
        reject(error instanceof UpstreamUnreachable ? error : new UpstreamUnreachable(describe(error)));
      });
      req.end(body);
    });
    const status = res.statusCode ?? 0;
    if (status >= 300 && status < 400) {
      res.resume();
      throw new UpstreamUnreachable(`it answered with a redirect (HTTP ${status}), which is not followed`);
    }
    let seen = 0;
    const limited = res.pipe(
      new Transform({
        transform(chunk: Buffer, _encoding, done) {
          seen += chunk.length;
          if (seen > options.maxResponseBytes) {
            done(new UpstreamUnreachable(`its response exceeded ${options.maxResponseBytes} bytes`));
          } else {
            done(null, chunk);
          }
        },
      }),
    );
    res.on('error', (error) => limited.destroy(error));
    const responseHeaders = new Headers();
    for (const [name, value] of Object.entries(res.headers)) {
      if (typeof value === 'string') {
        responseHeaders.set(name, value);
      } else if (Array.isArray(value)) {
        for (const v of value) {
          responseHeaders.append(name, v);
        }
      }
    }
    const nullBody = status === 204 || status === 304 || init?.method === 'HEAD';
    return new Response(nullBody ? null : (Readable.toWeb(limited) as unknown as ReadableStream), {
      status,
      headers: responseHeaders,
    });
  }) as typeof fetch;
}

/**
 * The checks of every upstream call, before connecting: the scheme, and every address the
 * host resolves to (public unless private networks are allowed). The gRPC binding uses
 * it too (its channel then connects by name: see UpstreamForwarder).
 */
export async function vetUpstream(
  url: URL,
  options: Pick<UpstreamFetchOptions, 'allowPrivateNetworks' | 'resolve' | 'timeoutMs'>,
): Promise<ResolvedAddress> {
  if (url.protocol !== 'https:' && !(options.allowPrivateNetworks && url.protocol === 'http:')) {
    throw new UpstreamRefused(`${url.protocol} URLs are not allowed; use https`);
  }
  const host = hostOf(url);
  const family = isIP(host);
  let addresses: ResolvedAddress[];
  try {
    addresses =
      family !== 0
        ? [{ address: host, family }]
        : await withTimeout(
            options.resolve(host),
            options.timeoutMs,
            () => new UpstreamUnreachable(`its host name did not resolve within ${options.timeoutMs} ms`),
          );
  } catch (error) {
    if (error instanceof UpstreamUnreachable) {
      throw error;
    }
    // A name that does not exist is refused as a refused address is; a resolver that failed for now is retried.
    if ((error as { code?: string } | null)?.code === 'ENOTFOUND') {
      throw new UpstreamRefused(NOT_ALLOWED);
    }
    throw new UpstreamUnreachable(describe(error));
  }
  if (addresses.length === 0) {
    throw new UpstreamRefused(NOT_ALLOWED);
  }
  if (!options.allowPrivateNetworks && addresses.some(({ address }) => classifyAddress(address) !== 'public')) {
    throw new UpstreamRefused(NOT_ALLOWED);
  }
  return addresses[0];
}

/** The first of the error and its causes (five deep at most) that is a `type`; null when none is. */
function causeOf<T>(error: unknown, type: abstract new (...args: never[]) => T): T | null {
  for (
    let cause: unknown = error, depth = 0;
    cause && depth < 5;
    cause = (cause as { cause?: unknown }).cause, depth++
  ) {
    if (cause instanceof type) {
      return cause;
    }
  }
  return null;
}

/** Whether the address rules refused the upstream (anywhere in the error's causes): the forward fails at once. */
export function refusedDestination(error: unknown): boolean {
  return causeOf(error, UpstreamRefused) !== null;
}

/** gRPC statuses that mean the upstream was not reached or did not finish answering (not a refusal of the request). */
const GRPC_UNREACHED: Record<number, string> = {
  1: 'the call was canceled',
  4: 'it did not answer in time',
  8: 'its response exceeded the size limit',
  13: 'the connection failed',
  14: 'it is unavailable (the connection was refused or lost)',
};

/**
 * A gRPC call that failed without the upstream answering: a status without an A2A error
 * reason (the SDK raises them as A2AError too). Its words, else null (the upstream refused the request).
 */
export function grpcUnreached(error: unknown): string | null {
  const e = error as { transport?: string; status?: number; cause?: { code?: number } } | null;
  if (e?.transport !== 'grpc' || e.cause?.code === undefined) {
    return null;
  }
  return GRPC_UNREACHED[e.cause.code] ?? null;
}

/** How grpc-js's status begins when it could not decode a response (client-interceptors.js). */
export const GRPC_UNREADABLE_RESPONSE = 'Response message parsing error';

/**
 * A gRPC call the upstream answered (it took the request and sent its response) whose
 * response the client could not decode: grpc-js then ends the call itself with INTERNAL
 * and this text (client-interceptors.js), which the SDK keeps as its error's cause. Like
 * a 2xx HTTP response that cannot be read, the upstream has the message.
 */
export function answeredDespiteError(error: unknown): boolean {
  const e = error as { transport?: string; cause?: { code?: number; details?: unknown } } | null;
  return (
    e?.transport === 'grpc' &&
    e.cause?.code === 13 &&
    typeof e.cause.details === 'string' &&
    e.cause.details.startsWith(GRPC_UNREADABLE_RESPONSE)
  );
}

function describe(error: unknown): string {
  const code = (error as { code?: string } | null)?.code;
  return (code && NETWORK_ERRORS[code]) ?? 'a network error occurred';
}

const ANSWER_NOT_UNDERSTOOD = 'its answer could not be understood';

/** The reason an error gives for a status message: ours as written, anything else in general terms. */
export function reasonOf(error: unknown): string {
  const unreachable = causeOf(error, UpstreamUnreachable);
  if (unreachable) {
    return unreachable.message;
  }
  if (answeredDespiteError(error)) {
    return ANSWER_NOT_UNDERSTOOD;
  }
  const grpc = grpcUnreached(error);
  if (grpc) {
    return grpc;
  }
  const message = error instanceof Error ? error.message : String(error);
  const status = /\b(?:status|HTTP)\D{0,3}(\d{3})\b/i.exec(message)?.[1];
  if (status) {
    return `it answered HTTP ${status}`;
  }
  return ANSWER_NOT_UNDERSTOOD;
}

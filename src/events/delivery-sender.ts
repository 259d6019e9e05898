import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { lookup } from 'node:dns/promises';
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { classifyAddress, hostOf } from './address-policy';

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a host name to every address it has (injectable, so tests can play DNS). */
export type HostResolver = (hostname: string) => Promise<ResolvedAddress[]>;
export const HOST_RESOLVER = Symbol('HOST_RESOLVER');
export const systemResolver: HostResolver = (hostname) => lookup(hostname, { all: true, verbatim: true });

export interface OutboundRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** What the endpoint answered, as the attempt log keeps it (bounded; no cookie or credential header). */
export interface ResponseExcerpt {
  headers: Record<string, string>;
  /** The first RESPONSE_BODY_BYTES bytes of the body, as text. */
  body: string;
}

export interface SendOutcome {
  /** A 2xx within the timeout. */
  ok: boolean;
  statusCode: number | null;
  /** Why it failed, for the attempt log; never the response body, never a resolved address. */
  error: string | null;
  /** The response, when one came (null: no answer, or none was sent). */
  response?: ResponseExcerpt | null;
  durationMs: number;
  /** Refused by the destination policy: no retry can succeed, the delivery fails at once. */
  final?: boolean;
}

const MAX_ERROR_LENGTH = 500;
/** How much of a response the attempt log keeps: the body's first bytes, a few headers, each cut short. */
export const RESPONSE_BODY_BYTES = 1024;
const RESPONSE_HEADERS = 20;
const RESPONSE_HEADER_CHARS = 200;
/** Headers never kept: they may carry a session or a credential of the receiver. */
const SECRET_HEADERS = new Set([
  'set-cookie',
  'cookie',
  'authorization',
  'proxy-authorization',
  'www-authenticate',
  'proxy-authenticate',
]);
/** How long the body's first bytes are waited for once the status is in (the status alone decides success). */
const BODY_WAIT_MS = 1000;
/**
 * The one answer for every destination the policy refuses: saying what a name
 * resolves to would make the service a DNS oracle for the networks it can see.
 */
export const DESTINATION_NOT_ALLOWED = 'refused: the destination is not allowed';

class Refused extends Error {}

/**
 * POSTs one webhook or push notification. The destination is vetted after DNS
 * resolution, and the connection goes to the vetted address itself (a `lookup` that
 * returns it), so a name cannot resolve to a public address for the check and a
 * private one for the connection. Redirects are not followed. The whole send —
 * resolution, connection, TLS, response headers — must finish within the timeout.
 */
@Injectable()
export class DeliverySender implements OnApplicationShutdown {
  private readonly agents = {
    'http:': new http.Agent({ keepAlive: true, maxSockets: 64 }),
    'https:': new https.Agent({ keepAlive: true, maxSockets: 64 }),
  };

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(HOST_RESOLVER) private readonly resolve: HostResolver,
  ) {}

  onApplicationShutdown(): void {
    this.agents['http:'].destroy();
    this.agents['https:'].destroy();
  }

  async send(request: OutboundRequest): Promise<SendOutcome> {
    const started = process.hrtime.bigint();
    const elapsed = () => Math.round(Number(process.hrtime.bigint() - started) / 1e6);
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.config.events.timeoutMs);
    try {
      const url = new URL(request.url);
      const target = await this.vet(url, controller.signal);
      const { statusCode, response } = await this.post(url, target, request, controller.signal);
      const ok = statusCode >= 200 && statusCode < 300;
      return { ok, statusCode, error: ok ? null : `HTTP ${statusCode}`, durationMs: elapsed(), response };
    } catch (error) {
      if (error instanceof Refused) {
        return { ok: false, statusCode: null, error: error.message, durationMs: elapsed(), final: true };
      }
      const message = controller.signal.aborted
        ? `timeout: no response within ${this.config.events.timeoutMs} ms`
        : failureOf(error);
      return { ok: false, statusCode: null, error: message.slice(0, MAX_ERROR_LENGTH), durationMs: elapsed() };
    } finally {
      clearTimeout(timer);
    }
  }

  /** The address to connect to, once it is known to be allowed. */
  private async vet(url: URL, signal: AbortSignal): Promise<ResolvedAddress> {
    const allowPrivate = this.config.webhooksAllowPrivateNetworks;
    if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) {
      throw new Refused(`refused: ${url.protocol} URLs are not allowed; use https`);
    }
    const host = hostOf(url);
    const family = isIP(host);
    let addresses: ResolvedAddress[];
    try {
      addresses = family !== 0 ? [{ address: host, family }] : await abortable(this.resolve(host), signal);
    } catch (error) {
      if (signal.aborted) {
        throw error;
      }
      throw new Error(`${host} could not be resolved${codeOf(error) ? ` (${codeOf(error)})` : ''}`);
    }
    if (addresses.length === 0) {
      throw new Error(`${host} has no address`);
    }
    if (!allowPrivate && addresses.some(({ address }) => classifyAddress(address) !== 'public')) {
      throw new Refused(DESTINATION_NOT_ALLOWED);
    }
    return addresses[0];
  }

  private post(
    url: URL,
    target: ResolvedAddress,
    request: OutboundRequest,
    signal: AbortSignal,
  ): Promise<{ statusCode: number; response: ResponseExcerpt }> {
    const pinned: LookupFunction = (_hostname, options, callback) => {
      if (options.all) {
        (callback as (err: null, addresses: ResolvedAddress[]) => void)(null, [target]);
      } else {
        callback(null, target.address, target.family);
      }
    };
    const transport = url.protocol === 'https:' ? https : http;
    return new Promise((resolve, reject) => {
      const req = transport.request(
        url,
        {
          method: 'POST',
          agent: this.agents[url.protocol as 'http:' | 'https:'],
          lookup: pinned,
          signal,
          headers: {
            'content-type': 'application/json',
            'user-agent': 'a2a-service-webhooks/1',
            'content-length': String(Buffer.byteLength(request.body)),
            ...request.headers,
          },
        },
        (res: IncomingMessage) => {
          // Only the status counts. The body's first bytes are kept for the attempt log (waited
          // for at most BODY_WAIT_MS), the rest is read and dropped so the connection can be reused.
          const statusCode = res.statusCode ?? 0;
          const chunks: Buffer[] = [];
          let kept = 0;
          let done = false;
          const finish = () => {
            if (done) {
              return;
            }
            done = true;
            clearTimeout(wait);
            res.removeListener('data', collect);
            res.resume();
            // PostgreSQL text holds no NUL: it is dropped from the excerpt.
            const body = Buffer.concat(chunks).subarray(0, RESPONSE_BODY_BYTES).toString('utf8').replace(/\0/g, '');
            resolve({ statusCode, response: { headers: keptHeaders(res), body } });
          };
          const collect = (chunk: Buffer) => {
            chunks.push(chunk);
            kept += chunk.length;
            if (kept >= RESPONSE_BODY_BYTES) {
              finish();
            }
          };
          const wait = setTimeout(finish, BODY_WAIT_MS);
          res.on('data', collect);
          res.once('end', finish);
          res.once('error', finish);
          res.once('aborted', finish);
        },
      );
      req.on('error', reject);
      req.end(request.body);
    });
  }
}

/** The response headers the attempt log keeps: at most RESPONSE_HEADERS, none that may hold a secret, each cut short. */
function keptHeaders(res: IncomingMessage): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(res.headers)) {
    if (Object.keys(kept).length >= RESPONSE_HEADERS) {
      break;
    }
    if (value === undefined || SECRET_HEADERS.has(name)) {
      continue;
    }
    kept[name] = (Array.isArray(value) ? value.join(', ') : value).slice(0, RESPONSE_HEADER_CHARS);
  }
  return kept;
}

/** A network error's code names what failed; its message would name the address connected to. */
function failureOf(error: unknown): string {
  const code = codeOf(error);
  if (code) {
    return `connection failed: ${code}`;
  }
  return error instanceof Error ? error.message : String(error);
}

function codeOf(error: unknown): string | null {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[A-Z][A-Z0-9_]*$/.test(code) ? code : null;
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(new Error('aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

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

export interface SendOutcome {
  /** A 2xx within the timeout. */
  ok: boolean;
  statusCode: number | null;
  /** Why it failed, for the attempt log; never the response body, never a resolved address. */
  error: string | null;
  durationMs: number;
  /** Refused by the destination policy: no retry can succeed, the delivery fails at once. */
  final?: boolean;
}

const MAX_ERROR_LENGTH = 500;
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
      const statusCode = await this.post(url, target, request, controller.signal);
      const ok = statusCode >= 200 && statusCode < 300;
      return { ok, statusCode, error: ok ? null : `HTTP ${statusCode}`, durationMs: elapsed() };
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

  private post(url: URL, target: ResolvedAddress, request: OutboundRequest, signal: AbortSignal): Promise<number> {
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
          // Only the status counts; the body is read and dropped so the connection can be reused.
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end(request.body);
    });
  }
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

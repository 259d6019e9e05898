import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { onFreePort } from './server-process';

/** A person at the provider: who the next login is. */
export interface ProviderAccount {
  sub: string;
  email: string;
  email_verified: boolean;
}

export interface OidcProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The account the provider logs in at its next login (without a page). */
  setAccount(account: ProviderAccount): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts a real OpenID Connect provider (panva's oidc-provider, test/support/oidc-provider.mjs)
 * in its own process on a loopback port, with one client whose redirect URI is `redirectUri`.
 */
export async function startOidcProvider(redirectUri: string): Promise<OidcProvider> {
  const clientId = 'a2a-console';
  const clientSecret = 'test-client-secret-0123456789';
  const child = spawn(process.execPath, [join(__dirname, 'oidc-provider.mjs')], {
    env: {
      PATH: process.env.PATH,
      OIDC_REDIRECT_URI: redirectUri,
      OIDC_CLIENT_ID: clientId,
      OIDC_CLIENT_SECRET: clientSecret,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const issuer = await new Promise<string>((resolve, reject) => {
    let line = '';
    // A provider that does not start is stopped: left running, it would keep Jest from exiting.
    const fail = (why: string) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`the OIDC provider ${why}: ${output}`));
    };
    const timer = setTimeout(() => fail('did not start'), 30_000);
    child.stdout!.on('data', (chunk) => {
      line += chunk;
      if (line.includes('\n')) {
        clearTimeout(timer);
        try {
          resolve((JSON.parse(line.slice(0, line.indexOf('\n'))) as { issuer: string }).issuer);
        } catch {
          fail(`printed ${line.slice(0, 200)}`);
        }
      }
    });
    child.on('exit', () => reject(new Error(`the OIDC provider exited: ${output}`)));
  });
  return {
    issuer,
    clientId,
    clientSecret,
    setAccount: async (account) => {
      const res = await fetch(`${issuer}/test/account`, { method: 'PUT', body: JSON.stringify(account) });
      if (res.status !== 204) {
        throw new Error(`setting the account answered ${res.status}`);
      }
    },
    close: async () => {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
      }
      await exited;
    },
  };
}

/**
 * Starts a provider and the service that signs in with it: `start` starts the service on
 * `port`, the one whose callback the provider knows. Should the port be taken meanwhile,
 * both start again on another (onFreePort).
 */
export async function withOidcProvider<T>(
  start: (port: number, provider: OidcProvider) => Promise<T>,
): Promise<{ provider: OidcProvider; service: T }> {
  return onFreePort(async (port) => {
    const provider = await startOidcProvider(`http://127.0.0.1:${port}/api/v1/console/sso/callback`);
    try {
      return { provider, service: await start(port, provider) };
    } catch (error) {
      await provider.close();
      throw error;
    }
  });
}

/**
 * A browser's cookies, by name (the tests' service and provider are both on 127.0.0.1,
 * whose cookies a browser shares across ports too), and navigation that follows
 * redirects by hand, as a browser would, stopping where `stop` says.
 */
export class Browser {
  readonly cookies = new Map<string, string>();

  async get(url: string): Promise<{ status: number; location: string | null; url: string; body: string }> {
    const cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const res = await fetch(url, { redirect: 'manual', headers: cookie ? { cookie } : {} });
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const name = pair.slice(0, pair.indexOf('=')).trim();
      const value = pair.slice(pair.indexOf('=') + 1).trim();
      const gone = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a) || /^\s*expires=.*1970/i.test(a));
      if (gone || value === '') {
        this.cookies.delete(name);
      } else {
        this.cookies.set(name, value);
      }
    }
    const location = res.headers.get('location');
    return { status: res.status, location: location && new URL(location, url).toString(), url, body: await res.text() };
  }

  /** Follows redirects from `url` until one leads to a URL `stop` accepts (not fetched); that URL. */
  async follow(url: string, stop: (url: string) => boolean): Promise<string> {
    let next = url;
    for (let hops = 0; hops < 20; hops++) {
      if (stop(next)) {
        return next;
      }
      const res = await this.get(next);
      if (!res.location) {
        throw new Error(`${next} answered ${res.status} without a redirect: ${res.body.slice(0, 300)}`);
      }
      next = res.location;
    }
    throw new Error('too many redirects');
  }
}

import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { signJwt, type JwtAlgorithm } from '../../src/common/jwt';

/** The audience and subject of the workload tokens tests sign (docs/api.md §17). */
export const WORKLOAD_AUDIENCE = 'https://a2a.example.test/workloads';
export const WORKLOAD_SUBJECT = 'system:serviceaccount:prod:planner';

/**
 * A workload's issuer for tests: keys generated in the test, its JWKS served over real
 * HTTP on loopback (`{url}/jwks.json`), counting its fetches.
 */
export class Issuer {
  readonly keys = new Map<string, { privateKey: KeyObject; publicKey: KeyObject; alg: JwtAlgorithm }>();
  published = new Set<string>();
  fetches = 0;
  private server!: Server;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      if (req.url === '/jwks.json') {
        this.fetches += 1;
        const keys = [...this.published].map((kid) => ({
          ...this.keys.get(kid)!.publicKey.export({ format: 'jwk' }),
          kid,
          alg: this.keys.get(kid)!.alg,
          use: 'sig',
        }));
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys }));
        return;
      }
      if (req.url === '/.well-known/openid-configuration') {
        const document = { issuer: this.url, jwks_uri: `${this.url}/jwks.json` };
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(document));
        return;
      }
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  add(kid: string, alg: JwtAlgorithm = 'ES256', publish = true): void {
    const pair =
      alg === 'ES256'
        ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
        : alg === 'EdDSA'
          ? generateKeyPairSync('ed25519')
          : generateKeyPairSync('rsa', { modulusLength: 2048 });
    this.keys.set(kid, { ...pair, alg });
    if (publish) {
      this.published.add(kid);
    }
  }

  token(claims: Record<string, unknown>, kid = 'k1', header: Record<string, unknown> = {}): string {
    const now = Math.floor(Date.now() / 1000);
    const { privateKey, alg } = this.keys.get(kid)!;
    return signJwt(
      { alg, kid, typ: 'JWT', ...header } as { alg: JwtAlgorithm },
      { iss: this.url, aud: WORKLOAD_AUDIENCE, sub: WORKLOAD_SUBJECT, iat: now, exp: now + 300, ...claims },
      privateKey,
    );
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

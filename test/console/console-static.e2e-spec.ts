import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAppAtOwnAddress, type TestApp } from '../support/app';

/** How Nest serves the built Console: caching, the SPA fallback, the Content-Security-Policy. */
describe('Serving the Console at /console/', () => {
  let t: TestApp;
  let dir: string;
  let outside: string;
  beforeAll(async () => {
    // A file beside the Console folder that must never be reachable through it.
    outside = mkdtempSync(join(tmpdir(), 'console-'));
    writeFileSync(join(outside, 'secret.txt'), 'TOP SECRET');
    dir = join(outside, 'app');
    mkdirSync(join(dir, 'assets'), { recursive: true });
    writeFileSync(
      join(dir, 'index.html'),
      '<!doctype html><title>Console</title><script type="module" src="/console/assets/index-abc123.js"></script>',
    );
    writeFileSync(join(dir, 'assets', 'index-abc123.js'), 'console.info("console");');
    t = await startAppAtOwnAddress({ CONSOLE_DIR: dir });
  });
  afterAll(async () => {
    await t.close();
    rmSync(outside, { recursive: true, force: true });
  });

  it('answers index.html, never cached, with a CSP that allows no inline script', async () => {
    const res = await t.http().get('/console/').expect(200);
    expect(res.text).toContain('<title>Console</title>');
    expect(res.headers['content-type']).toMatch(/text\/html/);
    expect(res.headers['cache-control']).toBe('no-cache');
    const csp = res.headers['content-security-policy'] as string;
    expect(csp).toMatch(/script-src 'self'(;|$)/);
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    expect(csp).toContain("frame-ancestors 'none'");
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  it('answers client routes with index.html (the SPA fallback)', async () => {
    const res = await t.http().get('/console/identities/acme-billing?tab=keys').expect(200);
    expect(res.text).toContain('<title>Console</title>');
    expect(res.headers['cache-control']).toBe('no-cache');
  });

  it('serves hashed assets as immutable for a year', async () => {
    const res = await t.http().get('/console/assets/index-abc123.js').expect(200);
    expect(res.text).toContain('console.info');
    expect(res.headers['content-type']).toMatch(/javascript/);
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
  });

  it('answers a missing asset with 404, not with index.html', async () => {
    const res = await t.http().get('/console/assets/nope-123.js').expect(404);
    expect(res.text).not.toContain('<title>Console</title>');
  });

  it('never serves a file from outside the Console folder', async () => {
    for (const path of [
      '/console/%2e%2e/secret.txt',
      '/console/assets/%2e%2e/%2e%2e/secret.txt',
      '/console/..%2fsecret.txt',
      '/console/assets/..%2f..%2fsecret.txt',
    ]) {
      const res = await t.http().get(path);
      expect(res.text).not.toContain('TOP SECRET');
      expect(res.status).toBeLessThan(500);
    }
  });

  it('sends a Console page asked for at another origin to the public one (PUBLIC_BASE_URL), before sign-in', async () => {
    const other = t.baseUrl.replace('127.0.0.1', 'localhost');
    const res = await t.http().get('/console/keys?identity=x').set('Host', new URL(other).host).expect(302);
    expect(res.headers.location).toBe(`${t.baseUrl}/console/keys?identity=x`);
    // Behind a proxy the Host may be the upstream's name: the proxy decides, no redirect loop.
    await t.http().get('/console/').set('Host', 'upstream:3000').set('X-Forwarded-For', '203.0.113.9').expect(200);
    // Assets are not pages: they are served wherever the page came from.
    await t.http().get('/console/assets/index-abc123.js').set('Host', new URL(other).host).expect(200);
    await t.http().get('/console/').expect(200);
  });

  it('redirects /console to /console/', async () => {
    const res = await t.http().get('/console').expect(301);
    expect(res.headers.location).toBe('/console/');
  });

  it('sends a browser that opens the root to the Console; any other client gets the 404 problem', async () => {
    for (const accept of ['text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', 'text/html']) {
      const res = await t.http().get('/').set('Accept', accept).expect(302);
      expect(res.headers.location).toBe('/console/');
    }
    for (const accept of [undefined, '*/*', 'application/json', 'application/problem+json']) {
      const req = t.http().get('/');
      const res = await (accept ? req.set('Accept', accept) : req).expect(404);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    }
    await t.http().get('/?q=1').set('Accept', 'text/html').expect(302);
    await t.http().post('/').set('Accept', 'text/html').expect(404);
    await t.http().get('/nope').set('Accept', 'text/html').expect(404);
  });

  it('leaves the API alone: /api/v1/console/me is still the REST route', async () => {
    await t.http().get('/api/v1/console/me').expect(401);
  });
});

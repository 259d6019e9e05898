import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import schema from '../fixtures/ai-catalog/ai-catalog-0.9.schema.json';
import { startApp, type TestApp } from '../support/app';
import { bearer, createEnabledIdentity, createIdentity, signup, type ConsoleAccount } from '../support/fixtures';

const PUBLIC_BASE_URL = 'https://agents.example.test';
const validate = addFormats(new Ajv({ allErrors: true })).compile(schema);

type Entry = { identifier: string; type: string; url: string; updatedAt?: string; tags?: string[] };

/** The public directory as an AI Catalog (docs/api.md §4, "AI Catalog"). */
describe('AI Catalog', () => {
  let t: TestApp;
  let acme: ConsoleAccount;

  beforeAll(async () => {
    t = await startApp({ PUBLIC_BASE_URL });
    acme = await signup(t, 'Catalog Org');
  });
  afterAll(() => t.close());

  async function listed(body: Record<string, unknown> = {}) {
    const identity = await createEnabledIdentity(t, acme, body);
    await t
      .http()
      .patch(`/api/v1/identities/${identity.handle}/settings`)
      .set(bearer(acme))
      .send({ publicly_discoverable: true })
      .expect(200);
    return identity.handle;
  }

  async function read(path = '/.well-known/ai-catalog.json') {
    const res = await t.http().get(path).expect(200);
    expect(res.headers['content-type']).toMatch(/^application\/ai-catalog\+json/);
    const document = JSON.parse(res.text);
    expect(validate(document) ? [] : validate.errors).toEqual([]);
    return { res, document: document as { specVersion: string; host: object; entries: Entry[] } };
  }

  it('lists each publicly listed agent with its card URL and updatedAt, valid against the specification, cached as cards are', async () => {
    // An admitted skill's tags stay out of the public catalog (as its cards leave the skill out).
    const shown = await listed({
      skills: [
        { id: 'x', name: 'X', description: 'x', tags: ['Billing'] },
        { id: 'y', name: 'Y', description: 'y', tags: ['Secret'], visibility: 'admitted' },
      ],
    });
    const hidden = (await createIdentity(t, bearer(acme), { publicly_discoverable: true })).agent_handle;
    const { res, document } = await read();
    expect(document.specVersion).toBe('0.9');
    expect(document.host).toEqual({
      displayName: 'agents.example.test',
      identifier: 'agents.example.test',
      documentationUrl: `${PUBLIC_BASE_URL}/api/docs`,
    });
    const entry = document.entries.find((e) => e.url.endsWith(`/a2a/${shown}/card`))!;
    expect(entry).toEqual({
      identifier: `urn:air:agents.example.test:a2a:${shown}`,
      type: 'application/a2a-agent-card+json',
      url: `${PUBLIC_BASE_URL}/a2a/${shown}/card`,
      updatedAt: expect.any(String),
      tags: ['Billing'],
    });
    expect(document.entries.some((e) => e.url.includes(hidden))).toBe(false);
    // The entry's URL is the card's (served under the base URL's path).
    await t.http().get(new URL(entry.url).pathname).expect(200);

    expect(res.headers['cache-control']).toBe('public, max-age=60');
    expect(res.headers.etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    const lastModified = res.headers['last-modified'];
    expect(Date.parse(lastModified)).toBeGreaterThanOrEqual(Date.parse(entry.updatedAt!) - 1000);
    await t.http().get('/.well-known/ai-catalog.json').set('If-None-Match', res.headers.etag).expect(304);
    await t.http().get('/.well-known/ai-catalog.json').set('If-Modified-Since', lastModified).expect(304);
    // If-None-Match decides when both are sent.
    await t
      .http()
      .get('/.well-known/ai-catalog.json')
      .set('If-None-Match', '"stale"')
      .set('If-Modified-Since', lastModified)
      .expect(200);

    // Any change of an identity moves both validators on.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await t
      .http()
      .patch(`/api/v1/identities/${shown}/settings`)
      .set(bearer(acme))
      .send({ publicly_discoverable: false })
      .expect(200);
    const after = await t.http().get('/.well-known/ai-catalog.json').set('If-None-Match', res.headers.etag).expect(200);
    expect(after.headers.etag).not.toBe(res.headers.etag);
    await t.http().get('/.well-known/ai-catalog.json').set('If-Modified-Since', lastModified).expect(200);
    expect(JSON.parse(after.text).entries.some((e: Entry) => e.url.includes(shown))).toBe(false);
  });

  it('pages through nested catalogs, every agent once', async () => {
    await t.db.query(
      `INSERT INTO identities (agent_handle, organization_id, claimed_at, enabled, publicly_discoverable, created_at)
       SELECT 'catalog-bulk-' || g, $1, now(), true, true, now() - make_interval(secs => g) FROM generate_series(1, 230) g`,
      [acme.organizationId],
    );
    const seen: string[] = [];
    let path: string | null = '/.well-known/ai-catalog.json';
    let pages = 0;
    while (path) {
      const { document } = await read(path);
      pages++;
      const nested = document.entries.filter((e) => e.type === 'application/ai-catalog+json');
      expect(nested.length).toBeLessThanOrEqual(1);
      expect(document.entries.filter((e) => e.type !== 'application/ai-catalog+json').length).toBeLessThanOrEqual(100);
      seen.push(...document.entries.filter((e) => e.type !== 'application/ai-catalog+json').map((e) => e.url));
      path = nested[0] ? nested[0].url.replace(PUBLIC_BASE_URL, '') : null;
    }
    expect(pages).toBeGreaterThanOrEqual(3);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.filter((url) => url.includes('catalog-bulk-')).length).toBe(230);
  });

  it('refuses a bad cursor or an unknown parameter with 400', async () => {
    expect((await t.http().get('/.well-known/ai-catalog.json').query({ cursor: 'nope' })).status).toBe(400);
    expect((await t.http().get('/.well-known/ai-catalog.json').query({ page: 2 })).status).toBe(400);
  });
});

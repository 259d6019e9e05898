import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { promisify } from 'node:util';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { verifyAgentCardSignature, type AgentCard } from '@a2a-js/sdk';
import { importJWK, type CryptoKey } from 'jose';
import { loadConfig } from '../../src/config/config';
import { CardSigner } from '../../src/directory/card-signer';
import { startApp, type TestApp } from '../support/app';
import { urlFor } from '../support/database';
import { schemaErrors, verifyCard, type Jwks } from '../support/agent-cards';
import { statementsFor } from '../support/statements';
import {
  apiKey,
  createEnabledIdentity,
  bearer,
  mintAdminKey,
  signup,
  unique,
  type ConsoleAccount,
} from '../support/fixtures';

/**
 * Agent Cards per A2A generation, checked against each generation's published JSON
 * schema, and their signatures, checked with `jose` and the JWK Set (docs/api.md §4).
 */
describe('Agent Cards: generations and signatures', () => {
  let t: TestApp;
  let acme: ConsoleAccount;

  beforeAll(async () => {
    t = await startApp();
    acme = await signup(t, 'Acme Cards');
  });
  afterAll(() => t.close());

  const skills = [
    { id: 'quotes', name: 'Quotes', description: 'Prices things.', tags: ['sales'], examples: ['Quote 12 units'] },
    { id: 'ledger', name: 'Ledger', description: 'Books things.', tags: ['finance'], visibility: 'admitted' },
  ];
  const card = (handle: string, version?: string) => {
    const req = t.http().get(`/a2a/${handle}/card`);
    return version === undefined ? req : req.set('A2A-Version', version);
  };
  const jwks = async (): Promise<Jwks> => (await t.http().get('/.well-known/jwks.json').expect(200)).body;

  describe('generations', () => {
    it('A2A-Version: 1.0 → a card valid against the v1.0 schema, with no v0.3-only field', async () => {
      const { handle } = await createEnabledIdentity(t, acme, { description: 'Sells.', skills });
      const res = await card(handle, '1.0').expect(200);
      expect(schemaErrors(res.body, '1.0')).toEqual([]);
      for (const field of [
        'url',
        'preferredTransport',
        'protocolVersion',
        'additionalInterfaces',
        'security',
        'supportsAuthenticatedExtendedCard',
      ]) {
        expect(res.body).not.toHaveProperty(field);
      }
      expect(res.body.capabilities.extendedAgentCard).toBe(true);
      // Controls: the schemas tell the generations apart.
      expect(schemaErrors((await card(handle).expect(200)).body, '1.0')).not.toEqual([]);
      expect(schemaErrors({ ...res.body, url: 'https://x.test' }, '1.0')).not.toEqual([]);
    });

    it('no header, 0.3 or 0.3.x → the v0.3 hybrid card, valid against the v0.3 schema', async () => {
      const { handle } = await createEnabledIdentity(t, acme, { skills });
      const bodies = [];
      for (const version of [undefined, '0.3', '0.3.0', '']) {
        const res = await card(handle, version).expect(200);
        expect(schemaErrors(res.body, '0.3')).toEqual([]);
        bodies.push(res.body);
      }
      expect(new Set(bodies.map((body) => JSON.stringify(body))).size).toBe(1);
      const hybrid = bodies[0];
      expect(hybrid).toMatchObject({
        protocolVersion: '0.3.0',
        preferredTransport: 'JSONRPC',
        url: `${t.config.publicBaseUrl}/a2a/${handle}`,
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
          // The token endpoint of docs/api.md §17, as client credentials.
          oauth2: {
            type: 'oauth2',
            flows: { clientCredentials: { tokenUrl: `${t.config.publicBaseUrl}/oauth/token` } },
            oauth2MetadataUrl: `${t.config.publicBaseUrl}/.well-known/oauth-authorization-server`,
          },
        },
        security: [{ apiKey: [] }, { oauth2: ['agent'] }],
        supportsAuthenticatedExtendedCard: true,
      });
      expect(hybrid.supportedInterfaces).toEqual((await card(handle, '1.0')).body.supportedInterfaces);
      // The v0.3 schema without the hybrid's v1.0 addition is still satisfied; without the v0.3 url it is not.
      const { url: _url, ...withoutUrl } = hybrid;
      expect(schemaErrors(withoutUrl, '0.3')).not.toEqual([]);
    });

    it("the card preview: both generations as served, unsigned, also while disabled; only the identity's organization, admin key or Console", async () => {
      const { handle, key } = await createEnabledIdentity(t, acme, { description: 'Previewed.', skills });
      const unsigned = (body: Record<string, unknown>) => {
        const { signatures: _signatures, ...rest } = body;
        return rest;
      };
      const served = {
        '1.0': unsigned((await card(handle, '1.0').expect(200)).body),
        '0.3': unsigned((await card(handle, '0.3').expect(200)).body),
      };
      const preview = (auth: Record<string, string>) =>
        t.http().get(`/api/v1/identities/${handle}/card-preview`).set(auth);
      const enabled = await preview(bearer(acme)).expect(200);
      expect(enabled.body).toEqual({
        agent_handle: handle,
        served: true,
        card_url: `${t.config.publicBaseUrl}/a2a/${handle}/card`,
        cards: served,
      });

      await t
        .http()
        .patch(`/api/v1/identities/${handle}/settings`)
        .set(bearer(acme))
        .send({ enabled: false })
        .expect(200);
      await card(handle, '1.0').expect(404);
      const adminKey = await mintAdminKey(t, acme);
      const stop = statementsFor(t, adminKey);
      const disabled = await preview(apiKey(adminKey)).expect(200);
      // Both generations from one read of the organization's name.
      expect(stop().filter((text) => text === 'organization_names')).toHaveLength(1);
      expect(disabled.body).toMatchObject({ served: false, cards: served });
      expect(schemaErrors(disabled.body.cards['1.0'], '1.0')).toEqual([]);
      expect(schemaErrors(disabled.body.cards['0.3'], '0.3')).toEqual([]);
      expect(JSON.stringify(disabled.body)).not.toContain('signatures');
      // The admitted skill stays off the public card, in the preview too.
      expect(disabled.body.cards['1.0'].skills.map((s: { id: string }) => s.id)).toEqual(['quotes']);

      // Another organization's admin key and Console: as if there were no such identity; the own key: 403.
      const globex = await signup(t, unique('Globex'));
      const other = await preview(apiKey(await mintAdminKey(t, globex))).expect(404);
      expect(other.body.code).toBe('identity_not_found');
      await preview(bearer(globex)).expect(404);
      await preview(apiKey(key)).expect(403);
      await t.http().get(`/api/v1/identities/${handle}/card-preview`).expect(401);
    });

    it('each representation has its own ETag; Vary: A2A-Version; 304 only for the same representation; both paths agree', async () => {
      const { handle } = await createEnabledIdentity(t, acme);
      const v03 = await card(handle).expect(200);
      const v1 = await card(handle, '1.0').expect(200);
      expect(v03.headers.etag).not.toBe(v1.headers.etag);
      for (const res of [v03, v1]) {
        expect(res.headers.vary).toMatch(/A2A-Version/i);
      }
      await card(handle).set('If-None-Match', v03.headers.etag).expect(304);
      await card(handle, '1.0').set('If-None-Match', v1.headers.etag).expect(304);
      const crossed = await card(handle, '1.0').set('If-None-Match', v03.headers.etag).expect(200);
      expect(crossed.body).toEqual(v1.body);
      const wellKnown = await t
        .http()
        .get(`/a2a/${handle}/.well-known/agent-card.json`)
        .set('A2A-Version', '1.0')
        .expect(200);
      expect(wellKnown.body).toEqual(v1.body);
      expect(wellKnown.headers.etag).toBe(v1.headers.etag);
    });

    it('the public directory embeds the generation the request asks for (header-less → v0.3 hybrid), each card valid', async () => {
      const word = unique('dirgen').replace(/-/g, '');
      const { handle } = await createEnabledIdentity(t, acme, { description: word, skills });
      await t
        .http()
        .patch(`/api/v1/identities/${handle}/settings`)
        .set(bearer(acme))
        .send({ publicly_discoverable: true })
        .expect(200);
      for (const version of [undefined, '1.0'] as const) {
        const req = t.http().get('/a2a/directory').query({ q: word });
        const res = await (version ? req.set('A2A-Version', version) : req).expect(200);
        expect(res.headers.vary).toMatch(/A2A-Version/i);
        expect(res.body.agents).toHaveLength(1);
        expect(schemaErrors(res.body.agents[0].card, version ?? '0.3')).toEqual([]);
        expect(res.body.agents[0].card).toEqual((await card(handle, version)).body);
        await verifyCard(res.body.agents[0].card, await jwks());
      }
    });
  });

  describe('signatures', () => {
    it('every card is signed; jose verifies it over the canonical card with the JWKS; a tampered card fails', async () => {
      const { handle } = await createEnabledIdentity(t, acme, { description: 'Signed.', skills });
      const keys = await jwks();
      expect(keys.keys.length).toBeGreaterThanOrEqual(1);
      for (const key of keys.keys) {
        expect(key).not.toHaveProperty('d');
      }
      for (const version of [undefined, '1.0']) {
        const { body } = await card(handle, version).expect(200);
        const [header] = await verifyCard(body, keys);
        expect(header).toEqual({
          alg: 'ES256',
          kid: keys.keys[0].kid,
          typ: 'JOSE',
          jku: `${t.config.publicBaseUrl}/.well-known/jwks.json`,
        });
        for (const tampered of [
          { ...body, name: 'Someone else' },
          { ...body, skills: [...body.skills, { id: 'x', name: 'X', description: 'x', tags: [] }] },
          { ...body, provider: { ...body.provider, organization: 'Evil' } },
        ]) {
          await expect(verifyCard(tampered, keys)).rejects.toThrow();
        }
      }
    });

    it('signatures are kept per card content: the same card the same signature, a changed card a new one over its own content', async () => {
      const { handle } = await createEnabledIdentity(t, acme, { description: 'Before.', skills });
      const keys = await jwks();
      const first = (await card(handle, '1.0').expect(200)).body;
      expect((await card(handle, '1.0').expect(200)).body.signatures).toEqual(first.signatures);
      await t
        .http()
        .patch(`/api/v1/identities/${handle}`)
        .set(bearer(acme))
        .send({ description: 'After.' })
        .expect(200);
      const changed = (await card(handle, '1.0').expect(200)).body;
      expect(changed.description).toBe('After.');
      expect(changed.signatures).not.toEqual(first.signatures);
      await verifyCard(changed, keys);
      await verifyCard(first, keys);
      // The earlier signature does not carry over to the changed card.
      await expect(verifyCard({ ...changed, signatures: first.signatures }, keys)).rejects.toThrow();
    });

    it("the SDK's own verifier accepts the v1.0 card too", async () => {
      const { handle } = await createEnabledIdentity(t, acme, { skills });
      const { body } = await card(handle, '1.0').expect(200);
      const keys = await jwks();
      const verify = verifyAgentCardSignature(
        async (kid) =>
          (await importJWK(
            keys.keys.find((key) => key.kid === kid)!,
            'ES256',
          )) as CryptoKey,
      );
      await expect(verify(body as AgentCard)).resolves.toBeUndefined();
      await expect(verify({ ...body, description: 'changed' } as AgentCard)).rejects.toThrow();
    });

    it('rotation: the new key signs; the previous key stays listed so earlier cards still verify; the one before is dropped', async () => {
      const { handle } = await createEnabledIdentity(t, acme);
      const signer = t.app.get(CardSigner);
      const before = (await card(handle, '1.0').expect(200)).body;
      const first = (await jwks()).keys[0].kid;

      const { kid: second, previous } = await signer.rotate();
      expect(previous).toBe(first);
      const afterOne = await jwks();
      expect(afterOne.keys.map((key) => key.kid)).toEqual([second, first]);
      const now = await card(handle, '1.0').expect(200);
      expect((await verifyCard(now.body, afterOne))[0].kid).toBe(second);
      await verifyCard(before, afterOne);

      const { kid: third } = await signer.rotate();
      const afterTwo = await jwks();
      expect(afterTwo.keys.map((key) => key.kid)).toEqual([third, second]);
      await expect(verifyCard(before, afterTwo)).rejects.toThrow(/no key/);
      const [{ status }] = await t.db.query(`SELECT status FROM card_signing_keys WHERE kid = $1`, [first]);
      expect(status).toBe('retired');
    });

    it("npm run cli -- rotate-card-key rotates the deployment's key: the JWKS lists the new key and the previous one", async () => {
      const before = (await jwks()).keys[0].kid;
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ['-r', 'ts-node/register/transpile-only', 'src/cli.ts', 'rotate-card-key'],
        {
          env: { PATH: process.env.PATH, DATABASE_URL: urlFor(t.database), MIGRATIONS_RUN: 'false', LOG_LEVEL: 'warn' },
        },
      );
      const [, kid] = /card signing key: (\S+) \(current\)/.exec(stdout)!;
      expect(stdout).toContain(`previous key:     ${before}`);
      expect((await jwks()).keys.map((key) => key.kid)).toEqual([kid, before]);
    });

    it('the generated key is kept in the database: a restart signs with the same key', async () => {
      const kid = (await jwks()).keys[0].kid;
      const again = await startApp({}, t);
      try {
        const keys = (await again.http().get('/.well-known/jwks.json').expect(200)).body as Jwks;
        expect(keys.keys[0].kid).toBe(kid);
      } finally {
        await again.close();
      }
    });
  });

  describe('CARD_SIGNING_KEY_FILE', () => {
    const dir = mkdtempSync(join(tmpdir(), 'card-keys-'));
    const pemFile = (name: string, type: 'ed25519' | 'ec' | 'rsa') => {
      const { privateKey } =
        type === 'ec'
          ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
          : type === 'rsa'
            ? generateKeyPairSync('rsa', { modulusLength: 2048 })
            : generateKeyPairSync('ed25519');
      const path = join(dir, name);
      writeFileSync(path, privateKey.export({ format: 'pem', type: 'pkcs8' }));
      return path;
    };

    it('an Ed25519 key file signs (EdDSA); a changed file is a rotation that keeps the previous key listed', async () => {
      const ed = await startApp({ CARD_SIGNING_KEY_FILE: pemFile('ed.pem', 'ed25519') });
      try {
        const account = await signup(ed, 'Keyed');
        const { handle } = await createEnabledIdentity(ed, account);
        const keys = (await ed.http().get('/.well-known/jwks.json').expect(200)).body as Jwks;
        expect(keys.keys[0]).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig' });
        const signed = (await ed.http().get(`/a2a/${handle}/card`).set('A2A-Version', '1.0').expect(200)).body;
        expect((await verifyCard(signed, keys))[0]).toMatchObject({ alg: 'EdDSA', kid: keys.keys[0].kid });
        expect(keys.keys).toHaveLength(1);
        const [{ private_key_pem: stored }] = await ed.db.query(
          `SELECT private_key_pem FROM card_signing_keys WHERE kid = $1`,
          [keys.keys[0].kid],
        );
        expect(stored).toBeNull(); // a file key stays in its file

        const p256 = await startApp({ CARD_SIGNING_KEY_FILE: pemFile('p256.pem', 'ec') }, ed);
        try {
          const rotated = (await p256.http().get('/.well-known/jwks.json').expect(200)).body as Jwks;
          expect(rotated.keys.map((key) => key.kty)).toEqual(['EC', 'OKP']);
          await verifyCard(signed, rotated);
          await expect(p256.app.get(CardSigner).rotate()).rejects.toThrow(/CARD_SIGNING_KEY_FILE/);
        } finally {
          await p256.close();
        }
      } finally {
        await ed.close();
      }
    });

    it('a key of another type, or no key at all, is a configuration error naming the variable', () => {
      expect(() => loadConfig({ CARD_SIGNING_KEY_FILE: pemFile('rsa.pem', 'rsa') })).toThrow(
        /CARD_SIGNING_KEY_FILE must hold a P-256 \(EC\) or Ed25519/,
      );
      expect(() => loadConfig({ CARD_SIGNING_KEY_FILE: join(dir, 'missing.pem') })).toThrow(
        /CARD_SIGNING_KEY_FILE must name a readable PEM/,
      );
    });
  });
});

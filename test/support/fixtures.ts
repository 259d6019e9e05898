import { Database } from '../../src/database/database';
import { randomBytes } from 'node:crypto';
import type { FilterMode } from '../../src/identities/identity.entity';
import { KeysService } from '../../src/keys/keys.service';
import type { TestApp } from './app';

export const PASSWORD = 'correct horse battery staple';

export interface ConsoleAccount {
  token: string;
  userId: string;
  organizationId: string;
  email: string;
}

export const unique = (prefix: string) => `${prefix}-${randomBytes(4).toString('hex')}`;

export async function signup(t: TestApp, organizationName = unique('org')): Promise<ConsoleAccount> {
  const email = `${unique('user')}@example.test`;
  const res = await t
    .http()
    .post('/api/v1/console/signup')
    .send({ organization_name: organizationName, email, password: PASSWORD })
    .expect(201);
  return { token: res.body.token, userId: res.body.user.id, organizationId: res.body.organization.id, email };
}

export const bearer = (account: ConsoleAccount) => ({ Authorization: `Bearer ${account.token}` });
export const apiKey = (key: string) => ({ 'X-API-Key': key });

export async function mintAdminKey(t: TestApp, account: ConsoleAccount): Promise<string> {
  const res = await t.http().post('/api/v1/api-keys').set(bearer(account)).send({ scope: 'admin' }).expect(201);
  return res.body.key;
}

export async function mintAgentKey(t: TestApp, account: ConsoleAccount, identityId: string): Promise<string> {
  const res = await t
    .http()
    .post('/api/v1/api-keys')
    .set(bearer(account))
    .send({ scope: 'agent', scoped_identity_id: identityId })
    .expect(201);
  return res.body.key;
}

export interface IdentityFixture {
  id: string;
  handle: string;
}

export interface IdentityOptions {
  organizationId: string | null;
  enabled?: boolean;
  handle?: string;
  publiclyDiscoverable?: boolean;
  allowPublicEgress?: boolean;
  filterMode?: FilterMode;
}

/**
 * Inserts an identity row directly. Used only where the identities API is not the
 * subject of the test; `organizationId: null` gives an unclaimed identity. Settings
 * left out take the schema's defaults.
 */
export async function insertIdentity(t: TestApp, options: IdentityOptions): Promise<IdentityFixture> {
  const handle = options.handle ?? unique('agent');
  const [row] = (await t.db.query(
    `INSERT INTO identities (agent_handle, organization_id, claimed_at, enabled, publicly_discoverable, allow_public_egress, filter_mode)
     VALUES ($1, $2, CASE WHEN $2::uuid IS NULL THEN NULL ELSE now() END, $3, $4, $5, $6) RETURNING id`,
    [
      handle,
      options.organizationId,
      options.enabled ?? false,
      options.publiclyDiscoverable ?? false,
      options.allowPublicEgress ?? false,
      options.filterMode ?? 'whitelist',
    ],
  )) as Array<{ id: string }>;
  return { id: row.id, handle };
}

/** An agent key for an identity that cannot be reached through the API (unclaimed). */
export async function mintKeyDirectly(t: TestApp, identityId: string): Promise<string> {
  const keys = t.app.get(KeysService);
  const minted = await t.app
    .get(Database)
    .transaction((em) => keys.mintWith(em, { scope: 'agent', identityId, createdBy: { type: 'signup', id: null } }));
  return minted.key;
}

export type AuthHeaders = Record<string, string>;

/** Creates an identity through the API (admin key or Console headers); returns the response body. */
export async function createIdentity(t: TestApp, auth: AuthHeaders, body: Record<string, unknown> = {}) {
  const res = await t
    .http()
    .post('/api/v1/identities')
    .set(auth)
    .send({ agent_handle: unique('agent'), ...body })
    .expect(201);
  return res.body as { id: string; agent_handle: string; api_key?: { key: string; id: string } } & Record<
    string,
    unknown
  >;
}

/** A claimed, enabled identity with its own agent key, through the API. */
export async function createEnabledIdentity(t: TestApp, account: ConsoleAccount, body: Record<string, unknown> = {}) {
  const identity = await createIdentity(t, bearer(account), { mint_key: true, ...body });
  await t
    .http()
    .patch(`/api/v1/identities/${identity.agent_handle}/settings`)
    .set(bearer(account))
    .send({ enabled: true })
    .expect(200);
  return { id: identity.id, handle: identity.agent_handle, key: identity.api_key!.key };
}

/** Agent signup (no credential): the unclaimed identity, its key and its claim code. */
export async function agentSignup(t: TestApp, body: Record<string, unknown> = {}) {
  const res = await t
    .http()
    .post('/api/v1/agent-signup')
    .send({ agent_handle: unique('agent'), ...body })
    .expect(201);
  return {
    id: res.body.identity.id as string,
    handle: res.body.identity.agent_handle as string,
    key: res.body.api_key.key as string,
    claimCode: res.body.claim.code as string,
    body: res.body,
  };
}

import { randomUUID } from 'node:crypto';
import { status as GrpcStatus, type Client as GrpcClient } from '@grpc/grpc-js';
import { hashApiKey } from '../../src/keys/key-format';
import { startApp, type TestApp } from '../support/app';
import { grpcClient, metadataOf, unary } from '../support/grpc';
import {
  apiKey,
  bearer,
  insertIdentity,
  mintAdminKey,
  mintKeyDirectly,
  signup,
  type ConsoleAccount,
  type IdentityFixture,
} from '../support/fixtures';
import { PROTOCOL_CASES, type Caller, type Party, type ProtocolCase, type RuleSpec } from './protocol-matrix';

/** The gRPC status each of the checks' HTTP statuses must become (docs/walkthrough.md, "Protocol bindings"). */
const GRPC_STATUS: Record<number, GrpcStatus> = {
  401: GrpcStatus.UNAUTHENTICATED,
  403: GrpcStatus.PERMISSION_DENIED,
  404: GrpcStatus.NOT_FOUND,
};

const BINDINGS = ['JSON-RPC', 'HTTP+JSON 1.0', 'HTTP+JSON 0.3', 'gRPC 1.0'] as const;
type Binding = (typeof BINDINGS)[number];

/**
 * PROTOCOL_CASES (protocol-matrix.ts): every credential and admission case, on every
 * binding — `POST /a2a/{handle}`, the HTTP+JSON routes of both generations, gRPC — with
 * the same status and reason in each binding's own error form.
 */
describe('protocol endpoint: credentials and admission', () => {
  let t: TestApp;
  let orgs: Record<Party['org'], ConsoleAccount>;
  let grpc: GrpcClient;

  beforeAll(async () => {
    t = await startApp({ GRPC_PORT: '0', GRPC_HOST: '127.0.0.1' });
    orgs = { acme: await signup(t, 'Acme'), globex: await signup(t, 'Globex') };
    grpc = grpcClient(t);
  });
  afterAll(async () => {
    grpc.close();
    await t.close();
  });

  async function identity(party: Party): Promise<IdentityFixture> {
    const claimed = party.claimed !== false;
    const created = await insertIdentity(t, {
      organizationId: claimed ? orgs[party.org].organizationId : null,
      enabled: claimed && party.enabled !== false,
      publiclyDiscoverable: party.publiclyDiscoverable,
      allowPublicEgress: party.allowPublicEgress,
      filterMode: party.filterMode,
    });
    if (party.deleted) {
      await t.db.query(`UPDATE identities SET status = 'deleted', deleted_at = now(), enabled = false WHERE id = $1`, [
        created.id,
      ]);
    }
    return created;
  }

  async function credential(caller: Caller, requester: IdentityFixture | null): Promise<Record<string, string>> {
    switch (caller.kind) {
      case 'none':
        return {};
      case 'malformed':
        return apiKey('a2a_agt_notAKeyAtAll');
      case 'revokedAgent': {
        const key = await mintKeyDirectly(t, (await identity({ org: 'acme', enabled: true })).id);
        await t.http().post('/api-keys/self/revoke').set(apiKey(key)).expect(200);
        return apiKey(key);
      }
      case 'expiredAgent': {
        const key = await mintKeyDirectly(t, (await identity({ org: 'acme', enabled: true })).id);
        await t.db.query(`UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE key_hash = $1`, [
          hashApiKey(key),
        ]);
        return apiKey(key);
      }
      case 'admin':
        return apiKey(await mintAdminKey(t, orgs.acme));
      case 'console':
        return bearer(orgs.acme);
      case 'agent':
        return apiKey(await mintKeyDirectly(t, requester!.id));
    }
  }

  async function insertRule(
    rule: RuleSpec,
    requester: IdentityFixture,
    worker: IdentityFixture,
    workerOrg: Party['org'],
  ): Promise<void> {
    const [owner, ownerOrg, peer, peerOrg] =
      rule.owner === 'requester'
        ? [requester, 'acme' as const, worker, workerOrg]
        : [worker, workerOrg, requester, 'acme' as const];
    await t.db.query(
      `INSERT INTO contact_rules (identity_id, organization_id, direction, action, peer_type, peer_identity_id, peer_organization_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [
        owner.id,
        orgs[ownerOrg].organizationId,
        rule.direction,
        rule.action,
        rule.peer,
        rule.peer === 'identity' ? peer.id : null,
        rule.peer === 'organization' ? orgs[peerOrg].organizationId : null,
      ],
    );
  }

  /**
   * A GetTask of an unknown task through `binding`. A call that passes the checks
   * reaches its method, whose own error (task not found) it answers with.
   */
  async function getUnknownTask(
    binding: Binding,
    c: ProtocolCase,
    handle: string,
    headers: Record<string, string>,
  ): Promise<void> {
    const id = randomUUID();
    switch (binding) {
      case 'JSON-RPC': {
        const res = await t
          .http()
          .post(`/a2a/${handle}`)
          .set(headers)
          .send({ jsonrpc: '2.0', id: 'case', method: 'tasks/get', params: { id } });
        expect({ status: res.status, reason: res.body.error?.data?.reason ?? null }).toEqual({
          status: c.status,
          reason: c.reason,
        });
        // A call that reaches its method answers 200 with the method's own JSON-RPC error.
        if (c.status === 200) {
          expect(res.body).toMatchObject({ id: 'case', error: { code: -32001 } });
        } else {
          expect(res.body).toMatchObject({
            jsonrpc: '2.0',
            id: 'case',
            error: { code: expect.any(Number), data: { status: c.status } },
          });
        }
        return;
      }
      case 'HTTP+JSON 1.0': {
        const res = await t
          .http()
          .get(`/a2a/${handle}/rest/tasks/${id}`)
          .set({ ...headers, 'A2A-Version': '1.0' });
        if (c.status === 200) {
          expect(res.status).toBe(404);
          expect(res.body.error).toMatchObject({
            code: 404,
            status: 'NOT_FOUND',
            details: [expect.objectContaining({ reason: 'TASK_NOT_FOUND' })],
          });
          return;
        }
        // RFC 9457 problem+json, whose `error` member is the google.rpc.Status that v1.0 clients read.
        expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect({ status: res.status, reason: res.body.code }).toEqual({ status: c.status, reason: c.reason });
        expect(res.body).toMatchObject({
          status: c.status,
          error: { code: c.status, details: [expect.objectContaining({ reason: c.reason!.toUpperCase() })] },
        });
        return;
      }
      case 'HTTP+JSON 0.3': {
        const res = await t.http().get(`/a2a/${handle}/rest/v1/tasks/${id}`).set(headers);
        if (c.status === 200) {
          expect({ status: res.status, body: res.body }).toMatchObject({ status: 404, body: { code: -32001 } });
          return;
        }
        // The v0.3 binding's error object, as on the JSON-RPC endpoint.
        expect({ status: res.status, reason: res.body.data?.reason }).toEqual({ status: c.status, reason: c.reason });
        expect(res.body).toMatchObject({ code: expect.any(Number), message: expect.any(String) });
        return;
      }
      case 'gRPC 1.0': {
        const outcome = await unary(grpc, 'getTask', { tenant: handle, id }, metadataOf(headers));
        const expected =
          c.status === 200
            ? { code: GrpcStatus.NOT_FOUND, reason: null }
            : { code: GRPC_STATUS[c.status], reason: c.reason };
        expect({ code: outcome.code, reason: outcome.reason }).toEqual(expected);
      }
    }
  }

  it.each(PROTOCOL_CASES.flatMap((c) => BINDINGS.map((binding) => [c.name, binding, c] as const)))(
    '%s (%s)',
    async (_, binding, c) => {
      const requester = c.caller.kind === 'agent' ? await identity(c.caller.identity) : null;
      const worker = c.worker === 'missing' ? null : await identity(c.worker);
      for (const rule of c.rules ?? []) {
        await insertRule(rule, requester!, worker!, (c.worker as Party).org);
      }
      const handle = worker?.handle ?? `nobody-${randomUUID().slice(0, 8)}`;
      await getUnknownTask(binding, c, handle, await credential(c.caller, requester));
    },
  );

  it("admission runs before the method: a denied call never reaches it, and the denial is recorded for the worker's side", async () => {
    const requester = await identity({ org: 'acme', enabled: true });
    const worker = await identity({ org: 'globex', enabled: true });
    const res = await t
      .http()
      .post(`/a2a/${worker.handle}`)
      .set(apiKey(await mintKeyDirectly(t, requester.id)))
      .send({ jsonrpc: '2.0', id: 1, method: 'no/such/method', params: {} })
      .expect(403);
    expect(res.body.error.data.reason).toBe('admission_denied');
    expect(res.body.error.message).not.toMatch(/rule|whitelist|requester|worker/i);
    const denials = await t.db.query(
      `SELECT reason FROM admission_decisions WHERE requester_id = $1 AND worker_id = $2`,
      [requester.id, worker.id],
    );
    expect(denials).toEqual([{ reason: 'not_permitted_by_requester' }]);
    const [{ count }] = await t.db.query(`SELECT count(*)::int AS count FROM tasks WHERE requester_identity_id = $1`, [
      requester.id,
    ]);
    expect(count).toBe(0);
  });
});

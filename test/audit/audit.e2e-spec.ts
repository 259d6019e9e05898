import { AuditService } from '../../src/audit/audit.service';
import { Database } from '../../src/database/database';
import { startApp, type TestApp } from '../support/app';
import { agentSignup, apiKey, bearer, PASSWORD, signup, unique, type ConsoleAccount } from '../support/fixtures';

/** The audit log (docs/api.md §15): one entry per change, in the change's transaction, never a secret. */
describe('audit log', () => {
  let t: TestApp;
  let acme: ConsoleAccount;
  let other: ConsoleAccount;
  const secrets: string[] = [PASSWORD];

  const entries = async (account: ConsoleAccount, query: Record<string, string> = {}) =>
    (
      await t
        .http()
        .get('/api/v1/audit-events')
        .query({ limit: '200', ...query })
        .set(bearer(account))
        .expect(200)
    ).body.audit_events as any[];
  const ofAction = async (account: ConsoleAccount, action: string) => entries(account, { action });

  beforeAll(async () => {
    t = await startApp({ WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true' });
    acme = await signup(t, 'Acme');
    other = await signup(t, 'Other');
  });
  afterAll(() => t.close());

  it('keys: minted, updated, revoked — one entry each, with the actor and the changed fields', async () => {
    const minted = await t
      .http()
      .post('/api/v1/api-keys')
      .set(bearer(acme))
      .send({ scope: 'admin', label: 'ci' })
      .expect(201);
    secrets.push(minted.body.key);
    const [mint] = await entries(acme, { action: 'api_key.minted', target: minted.body.id });
    expect(mint).toMatchObject({
      actor: { type: 'console_user', id: acme.userId },
      target: { type: 'api_key', id: minted.body.id, label: 'ci' },
      changes: { label: { before: null, after: 'ci' }, scope: { before: null, after: 'admin' } },
      request_id: expect.any(String),
    });
    expect(mint.client_address).toEqual(expect.any(String));

    await t.http().patch(`/api/v1/api-keys/${minted.body.id}`).set(bearer(acme)).send({ label: 'deploy' }).expect(200);
    const updates = await entries(acme, { action: 'api_key.updated', target: minted.body.id });
    expect(updates).toHaveLength(1);
    expect(updates[0].changes).toEqual({ label: { before: 'ci', after: 'deploy' } });

    // An admin key acts under its label.
    const identity = await t
      .http()
      .post('/api/v1/identities')
      .set(apiKey(minted.body.key))
      .send({ agent_handle: unique('agent') })
      .expect(201);
    const [created] = await entries(acme, { action: 'identity.created', target: identity.body.id });
    expect(created.actor).toEqual({ type: 'api_key', id: minted.body.id, label: 'deploy', name: 'deploy' });
    // Found by its label as by its id.
    expect((await entries(acme, { actor: 'deploy' })).map((e) => e.id)).toContain(created.id);
    expect(created.target).toEqual({ type: 'identity', id: identity.body.id, label: identity.body.agent_handle });

    await t.http().post(`/api/v1/api-keys/${minted.body.id}/revoke`).set(bearer(acme)).expect(200);
    await t.http().post(`/api/v1/api-keys/${minted.body.id}/revoke`).set(bearer(acme)).expect(200); // revoking twice changes nothing
    const revoked = await entries(acme, { action: 'api_key.revoked', target: minted.body.id });
    expect(revoked).toHaveLength(1);
    expect(revoked[0].changes).toEqual({ status: { before: 'active', after: 'revoked' } });
  });

  it('identities: updated, settings changed, deleted; signup and claim', async () => {
    const handle = unique('agent');
    await t.http().post('/api/v1/identities').set(bearer(acme)).send({ agent_handle: handle }).expect(201);
    await t
      .http()
      .patch(`/api/v1/identities/${handle}`)
      .set(bearer(acme))
      .send({ display_name: 'Billing' })
      .expect(200);
    const [updated] = await entries(acme, { action: 'identity.updated', target: handle });
    expect(updated.changes).toEqual({ display_name: { before: '', after: 'Billing' } });

    await t.http().patch(`/api/v1/identities/${handle}/settings`).set(bearer(acme)).send({ enabled: true }).expect(200);
    const [settings] = await entries(acme, { action: 'identity.settings_changed', target: handle });
    expect(settings.changes).toEqual({ enabled: { before: false, after: true } });

    await t.http().delete(`/api/v1/identities/${handle}`).set(bearer(acme)).expect(204);
    expect(await entries(acme, { action: 'identity.deleted', target: handle })).toHaveLength(1);

    const agent = await agentSignup(t);
    secrets.push(agent.key, agent.claimCode);
    await t.http().post('/api/v1/identities/claim').set(bearer(acme)).send({ claim_code: agent.claimCode }).expect(200);
    const [claimed] = await entries(acme, { action: 'identity.claimed', target: agent.handle });
    expect(claimed).toMatchObject({
      actor: { type: 'console_user', id: acme.userId },
      changes: {
        organization_id: { before: null, after: acme.organizationId },
        claimed: { before: false, after: true },
      },
    });
  });

  it('a change that rolls back writes nothing (a taken handle is a 409)', async () => {
    const handle = unique('agent');
    await t.http().post('/api/v1/identities').set(bearer(acme)).send({ agent_handle: handle }).expect(201);
    await t
      .http()
      .post('/api/v1/identities')
      .set(bearer(acme))
      .send({ agent_handle: handle, mint_key: true })
      .expect(409);
    expect(await entries(acme, { action: 'identity.created', target: handle })).toHaveLength(1);
    const [{ count }] = await t.db.query(`SELECT count(*)::int AS count FROM audit_events WHERE target_label = $1`, [
      handle,
    ]);
    expect(count).toBe(1);
  });

  it('an entry is part of its transaction: recorded, then rolled back, it is gone', async () => {
    const audit = t.app.get(AuditService);
    const label = unique('rolled-back');
    await expect(
      t.app.get(Database).transaction(async (tx) => {
        await audit.record(tx, {
          organizationId: acme.organizationId,
          actor: { kind: 'console', id: acme.userId },
          action: 'api_key.updated',
          target: { type: 'api_key', label },
        });
        throw new Error('the change fails after recording');
      }),
    ).rejects.toThrow('the change fails');
    const [{ count }] = await t.db.query(`SELECT count(*)::int AS count FROM audit_events WHERE target_label = $1`, [
      label,
    ]);
    expect(count).toBe(0);
  });

  it('contact rules, webhooks and upstreams', async () => {
    const owner = unique('agent');
    const peer = unique('agent');
    for (const h of [owner, peer]) {
      await t.http().post('/api/v1/identities').set(bearer(acme)).send({ agent_handle: h }).expect(201);
    }
    const rule = await t
      .http()
      .post('/api/v1/contact-rules')
      .set(bearer(acme))
      .send({ identity: owner, direction: 'outbound', action: 'allow', peer: { type: 'identity', handle: peer } })
      .expect(201);
    await t
      .http()
      .patch(`/api/v1/contact-rules/${rule.body.id}`)
      .set(bearer(acme))
      .send({ action: 'block' })
      .expect(200);
    await t.http().delete(`/api/v1/contact-rules/${rule.body.id}`).set(bearer(acme)).expect(204);
    const rules = await entries(acme, { action: 'contact_rule.*', target: rule.body.id });
    expect(rules.map((e) => e.action)).toEqual([
      'contact_rule.deleted',
      'contact_rule.updated',
      'contact_rule.created',
    ]);
    expect(rules[1].changes).toEqual({ action: { before: 'allow', after: 'block' } });

    const webhook = await t
      .http()
      .post('/api/v1/webhooks')
      .set(bearer(acme))
      .send({ url: 'http://127.0.0.1:9/hook', events: ['task.created'] })
      .expect(201);
    secrets.push(webhook.body.secret);
    const rotated = await t
      .http()
      .post(`/api/v1/webhooks/${webhook.body.id}/rotate-secret`)
      .set(bearer(acme))
      .expect(200);
    secrets.push(rotated.body.secret);
    await t
      .http()
      .patch(`/api/v1/webhooks/${webhook.body.id}`)
      .set(bearer(acme))
      .send({ description: 'ops' })
      .expect(200);
    await t.http().delete(`/api/v1/webhooks/${webhook.body.id}`).set(bearer(acme)).expect(204);
    const hooks = await entries(acme, { action: 'webhook.*', target: webhook.body.id });
    expect(hooks.map((e) => e.action)).toEqual([
      'webhook.deleted',
      'webhook.updated',
      'webhook.secret_rotated',
      'webhook.created',
    ]);
    expect(hooks[1].changes).toEqual({ description: { before: '', after: 'ops' } });

    const token = `upstream-token-${unique('s')}`;
    secrets.push(token);
    await t
      .http()
      .put(`/api/v1/identities/${owner}/upstream`)
      .set(bearer(acme))
      .send({
        url: 'http://127.0.0.1:9/a2a',
        protocol_version: '1.0',
        binding: 'JSONRPC',
        auth: { type: 'bearer', value: token },
      })
      .expect(200);
    await t.http().delete(`/api/v1/identities/${owner}/upstream`).set(bearer(acme)).expect(204);
    const upstream = await entries(acme, { action: 'upstream.*', target: owner });
    expect(upstream.map((e) => e.action)).toEqual(['upstream.removed', 'upstream.set']);
    expect(upstream[1].changes.auth.after).toEqual({ type: 'bearer', header: null, value_set: true });
  });

  it('console: sign-in, failed sign-in, password change, invitations and members', async () => {
    await t.http().post('/api/v1/console/login').send({ email: acme.email, password: 'wrong password!' }).expect(401);
    await t.http().post('/api/v1/console/login').send({ email: acme.email, password: PASSWORD }).expect(200);
    const failed = await ofAction(acme, 'console.sign_in_failed');
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({
      actor: { type: 'console_user', id: acme.userId },
      target: { label: acme.email },
    });
    expect(await ofAction(acme, 'console.signed_in')).toHaveLength(1);

    const newPassword = `${PASSWORD} again`;
    secrets.push(newPassword);
    await t
      .http()
      .post('/api/v1/console/password')
      .set(bearer(acme))
      .send({ current_password: PASSWORD, new_password: newPassword })
      .expect(204);
    const [changed] = await ofAction(acme, 'console_user.password_changed');
    expect(changed.changes).toEqual({});

    const invite = await t
      .http()
      .post('/api/v1/console/invites')
      .set(bearer(acme))
      .send({ email: `${unique('u')}@example.test` })
      .expect(201);
    const code = String(invite.body.url).split('#')[1];
    secrets.push(code);
    await t.http().post('/api/v1/console/invites/accept').send({ code, password: PASSWORD }).expect(201);
    const second = await t
      .http()
      .post('/api/v1/console/invites')
      .set(bearer(acme))
      .send({ email: `${unique('u')}@example.test` })
      .expect(201);
    await t.http().delete(`/api/v1/console/invites/${second.body.id}`).set(bearer(acme)).expect(204);
    const invitations = await entries(acme, { action: 'invitation.*' });
    expect(invitations.map((e) => e.action)).toEqual([
      'invitation.revoked',
      'invitation.created',
      'invitation.accepted',
      'invitation.created',
    ]);
    const member = invitations[2].actor.id;
    await t.http().delete(`/api/v1/console/members/${member}`).set(bearer(acme)).expect(204);
    expect(await entries(acme, { action: 'member.removed', target: member })).toHaveLength(1);
  });

  it('never contains a secret', async () => {
    const all = JSON.stringify(await t.db.query(`SELECT * FROM audit_events`));
    for (const secret of secrets) {
      expect(all).not.toContain(secret);
    }
    expect(all).not.toMatch(/key_hash|password_hash|code_hash|auth_value/);
  });

  it('filters and pages newest first; bad since and cursor are 400', async () => {
    const page1 = await t.http().get('/api/v1/audit-events').query({ limit: '3' }).set(bearer(acme)).expect(200);
    expect(page1.body.audit_events).toHaveLength(3);
    const page2 = await t
      .http()
      .get('/api/v1/audit-events')
      .query({ limit: '3', cursor: page1.body.next_cursor })
      .set(bearer(acme))
      .expect(200);
    const all = await entries(acme);
    expect([...page1.body.audit_events, ...page2.body.audit_events].map((e: any) => e.id)).toEqual(
      all.slice(0, 6).map((e) => e.id),
    );
    const times = all.map((e) => e.created_at);
    expect([...times].sort().reverse()).toEqual(times);

    expect((await entries(acme, { actor: acme.userId })).every((e) => e.actor.id === acme.userId)).toBe(true);
    // A member by email (as typed, any case): the same entries, each naming them.
    const byEmail = await entries(acme, { actor: acme.email.toUpperCase() });
    expect(byEmail.map((e) => e.id)).toEqual((await entries(acme, { actor: acme.userId })).map((e) => e.id));
    expect(byEmail.length).toBeGreaterThan(0);
    expect(byEmail.every((e) => e.actor.name === acme.email)).toBe(true);
    expect(await entries(acme, { actor: 'nobody@example.test' })).toEqual([]);
    expect(await entries(acme, { since: new Date(Date.now() + 60_000).toISOString() })).toEqual([]);
    for (const query of [
      { since: 'yesterday' },
      { cursor: 'nope' },
      { actor: 'x'.repeat(321) },
      { action: 'DROP TABLE' },
      { limit: '0' },
    ]) {
      await t.http().get('/api/v1/audit-events').query(query).set(bearer(acme)).expect(400);
    }
  });

  it("shows only the caller's organization; admin keys read it, agent keys are refused", async () => {
    const theirs = await entries(other);
    const ours = new Set((await entries(acme)).map((e) => e.id));
    expect(theirs.some((e) => ours.has(e.id))).toBe(false);
    expect(await entries(other, { action: 'api_key.*' })).toEqual([]);

    const admin = await t.http().post('/api/v1/api-keys').set(bearer(other)).send({ scope: 'admin' }).expect(201);
    const read = await t.http().get('/api/v1/audit-events').set(apiKey(admin.body.key)).expect(200);
    expect(read.body.audit_events.map((e: any) => e.action)).toContain('api_key.minted');
    const handle = unique('agent');
    const identity = await t
      .http()
      .post('/api/v1/identities')
      .set(bearer(other))
      .send({ agent_handle: handle, mint_key: true })
      .expect(201);
    await t.http().get('/api/v1/audit-events').set(apiKey(identity.body.api_key.key)).expect(403);
  });
});

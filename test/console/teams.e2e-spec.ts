import { startApp, type TestApp } from '../support/app';
import { apiKey, bearer, mintAdminKey, PASSWORD, signup, unique, type ConsoleAccount } from '../support/fixtures';

const NEW_PASSWORD = 'a brand new passphrase';

describe('Console teams: invitations, members, passwords', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ CONSOLE_MAX_MEMBERS: '3', CONSOLE_MAX_OPEN_INVITES: '3', EVENTS_DISPATCHER: 'off' });
  });
  afterAll(() => t.close());

  const email = () => `${unique('invitee')}@example.test`;
  const codeOf = (url: string) => url.slice(url.indexOf('#') + 1);

  /** Accepts an invitation (no credential), on `app`. */
  const accept = (code: string, app = t) =>
    app.http().post('/api/v1/console/invites/accept').send({ code, password: PASSWORD });

  async function invite(owner: ConsoleAccount, address = email()) {
    const res = await t.http().post('/api/v1/console/invites').set(bearer(owner)).send({ email: address }).expect(201);
    return { id: res.body.id as string, email: address, code: codeOf(res.body.url), body: res.body };
  }

  /** Invites and accepts: a new member of `owner`'s organization. */
  async function addMember(owner: ConsoleAccount): Promise<ConsoleAccount> {
    const invited = await invite(owner);
    const res = await accept(invited.code).expect(201);
    return {
      token: res.body.token,
      userId: res.body.user.id,
      organizationId: res.body.organization.id,
      email: invited.email,
    };
  }

  const events = (organizationId: string, type: string) =>
    t.db.query(`SELECT data FROM events WHERE organization_id = $1 AND type = $2 ORDER BY created_at`, [
      organizationId,
      type,
    ]) as Promise<Array<{ data: Record<string, any> }>>;

  it('invite → accept → the new member signs in to the inviting organization', async () => {
    const owner = await signup(t, 'Team Inc');
    const address = email();
    const created = await t
      .http()
      .post('/api/v1/console/invites')
      .set(bearer(owner))
      .send({ email: address })
      .expect(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      email: address,
      invited_by: owner.userId,
      created_at: expect.any(String),
      expires_at: expect.any(String),
      url: expect.stringMatching(new RegExp(`^${t.config.publicBaseUrl}/console/accept#a2a_inv_[A-Za-z0-9_-]{43}$`)),
    });
    const days = (Date.parse(created.body.expires_at) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(6.99);
    expect(days).toBeLessThanOrEqual(7);

    const code = codeOf(created.body.url);
    const [stored] = await t.db.query(`SELECT code_hash::text AS hash FROM console_invites WHERE id = $1`, [
      created.body.id,
    ]);
    expect(JSON.stringify(stored)).not.toContain(code);

    // The link's page names who is invited where (no credential: the code is the proof).
    const lookup = () => t.http().post('/api/v1/console/invites/lookup').send({ code });
    expect((await lookup().expect(200)).body).toEqual({
      email: address,
      organization: { name: 'Team Inc' },
      expires_at: created.body.expires_at,
    });
    await t.http().post('/api/v1/console/invites/lookup').send({ code: 'a2a_inv_nope' }).expect(404);

    const accepted = await accept(code).expect(201);
    await lookup().expect(404);
    expect(accepted.body).toMatchObject({
      token: expect.stringMatching(/^a2a_ses_/),
      user: { email: address, organization_id: owner.organizationId },
      organization: { id: owner.organizationId, name: 'Team Inc' },
    });
    expect(accepted.headers['set-cookie'][0]).toMatch(/^a2a_session=a2a_ses_/);

    const login = await t.http().post('/api/v1/console/login').send({ email: address, password: PASSWORD }).expect(200);
    const me = await t.http().get('/api/v1/console/me').set('Authorization', `Bearer ${login.body.token}`).expect(200);
    expect(me.body.organization.id).toBe(owner.organizationId);

    const members = await t.http().get('/api/v1/console/members').set(bearer(owner)).expect(200);
    expect(members.body).toEqual({
      members: [
        {
          id: accepted.body.user.id,
          email: address,
          created_at: expect.any(String),
          last_login_at: expect.any(String),
        },
        { id: owner.userId, email: owner.email, created_at: expect.any(String), last_login_at: expect.any(String) },
      ],
      next_cursor: null,
    });
    // An accepted invitation is no longer open.
    const open = await t.http().get('/api/v1/console/invites').set(bearer(owner)).expect(200);
    expect(open.body).toEqual({ invites: [], next_cursor: null });

    const [added] = await events(owner.organizationId, 'console.member_added');
    // The member as of joining (the login above stamped a later last_login_at).
    expect(added.data).toEqual({
      member: { ...members.body.members[0], last_login_at: added.data.member.created_at },
      invited_by: owner.userId,
    });
  });

  it("member events reach the organization's webhooks subscribed to them, never identity-scoped ones", async () => {
    const owner = await signup(t);
    const subscribe = (body: object) =>
      t
        .http()
        .post('/api/v1/webhooks')
        .set(bearer(owner))
        .send({ url: 'https://hooks.example.invalid/team', ...body })
        .expect(201);
    const orgWide = await subscribe({ events: ['console.member_added', 'console.member_removed'] });
    const identity = await t
      .http()
      .post('/api/v1/identities')
      .set(bearer(owner))
      .send({ agent_handle: unique('team') })
      .expect(201);
    const scoped = await subscribe({ events: ['*'], identity: identity.body.agent_handle });
    const member = await addMember(owner);
    await t.http().delete(`/api/v1/console/members/${member.userId}`).set(bearer(owner)).expect(204);
    const typesFor = async (webhookId: string) =>
      (
        await t.db.query(
          `SELECT e.type FROM deliveries d JOIN events e ON e.id = d.event_id WHERE d.webhook_id = $1 ORDER BY e.created_at`,
          [webhookId],
        )
      ).map((row: { type: string }) => row.type);
    expect(await typesFor(orgWide.body.id)).toEqual(['console.member_added', 'console.member_removed']);
    expect(await typesFor(scoped.body.id)).toEqual([]);
  });

  it('an invitation works once', async () => {
    const owner = await signup(t);
    const invited = await invite(owner);
    await accept(invited.code).expect(201);
    const again = await accept(invited.code).expect(404);
    expect(again.body.code).toBe('invite_code_invalid');
  });

  it('two acceptances of one code at once: exactly one member', async () => {
    const owner = await signup(t);
    const invited = await invite(owner);
    const results = await Promise.all([1, 2].map(() => accept(invited.code)));
    expect(results.map((r) => r.status).sort()).toEqual([201, 404]);
    const [{ count }] = await t.db.query(
      `SELECT count(*)::int AS count FROM console_users WHERE organization_id = $1`,
      [owner.organizationId],
    );
    expect(count).toBe(2);
  });

  it('a wrong code is refused with one answer', async () => {
    for (const code of ['a2a_inv_' + 'x'.repeat(43), 'nonsense']) {
      const res = await accept(code).expect(404);
      expect(res.body.code).toBe('invite_code_invalid');
    }
  });

  it('an expired invitation is refused and no longer listed', async () => {
    const owner = await signup(t);
    const invited = await invite(owner);
    await t.db.query(`UPDATE console_invites SET expires_at = now() - interval '1 second' WHERE id = $1`, [invited.id]);
    const res = await accept(invited.code).expect(404);
    expect(res.body.code).toBe('invite_code_invalid');
    const open = await t.http().get('/api/v1/console/invites').set(bearer(owner)).expect(200);
    expect(open.body.invites).toEqual([]);
  });

  it('the invitation lifetime is configurable', async () => {
    const short = await startApp({ CONSOLE_INVITE_TTL_HOURS: '2' });
    try {
      const owner = await signup(short);
      const res = await short
        .http()
        .post('/api/v1/console/invites')
        .set(bearer(owner))
        .send({ email: email() })
        .expect(201);
      const hours = (Date.parse(res.body.expires_at) - Date.now()) / 3600_000;
      expect(hours).toBeGreaterThan(1.99);
      expect(hours).toBeLessThanOrEqual(2);
    } finally {
      await short.close();
    }
  });

  it('a withdrawn invitation stops working; another organization cannot withdraw it', async () => {
    const owner = await signup(t);
    const stranger = await signup(t);
    const invited = await invite(owner);
    const listed = await t.http().get('/api/v1/console/invites').set(bearer(owner)).expect(200);
    expect(listed.body.invites).toEqual([{ ...invited.body, url: undefined }].map(({ url: _, ...rest }) => rest));
    const foreign = await t.http().delete(`/api/v1/console/invites/${invited.id}`).set(bearer(stranger)).expect(404);
    expect(foreign.body.code).toBe('invite_not_found');
    await t.http().delete(`/api/v1/console/invites/${invited.id}`).set(bearer(owner)).expect(204);
    await t.http().delete(`/api/v1/console/invites/${invited.id}`).set(bearer(owner)).expect(404);
    await accept(invited.code).expect(404);
  });

  it('pages the open invitations', async () => {
    const owner = await signup(t);
    const ids = [(await invite(owner)).id, (await invite(owner)).id, (await invite(owner)).id].reverse();
    const first = await t.http().get('/api/v1/console/invites?limit=2').set(bearer(owner)).expect(200);
    expect(first.body.invites.map((i: { id: string }) => i.id)).toEqual(ids.slice(0, 2));
    const second = await t
      .http()
      .get(`/api/v1/console/invites?limit=2&cursor=${first.body.next_cursor}`)
      .set(bearer(owner))
      .expect(200);
    expect(second.body).toEqual({ invites: [expect.objectContaining({ id: ids[2] })], next_cursor: null });
  });

  it('inviting an email with an account elsewhere is answered as any invitation; accepting it answers 409 email_taken, as signup would', async () => {
    const owner = await signup(t);
    const elsewhere = await signup(t);
    const fresh = await invite(owner);
    const taken = await invite(owner, elsewhere.email.toUpperCase());
    // The same answer, field for field, as for an address nobody uses.
    const shape = (body: Record<string, unknown>) => Object.keys(body).sort();
    expect(shape(taken.body)).toEqual(shape(fresh.body));
    expect(taken.body).toMatchObject({ email: elsewhere.email.toUpperCase(), invited_by: owner.userId });
    const listed = await t.http().get('/api/v1/console/invites').set(bearer(owner)).expect(200);
    expect(listed.body.invites.map((i: { id: string }) => i.id).sort()).toEqual([fresh.id, taken.id].sort());
    // Accepting it is answered as signing up with that email is (409, at the signup rate):
    // a Console user belongs to one organization.
    const res = await accept(taken.code).expect(409);
    expect(res.body.code).toBe('email_taken');
  });

  it("a member of the inviter's own organization cannot be invited again (any spelling) → 409", async () => {
    const owner = await signup(t);
    const member = await addMember(owner);
    for (const address of [owner.email.toUpperCase(), member.email, member.email.normalize('NFD').toUpperCase()]) {
      const res = await t
        .http()
        .post('/api/v1/console/invites')
        .set(bearer(owner))
        .send({ email: address })
        .expect(409);
      expect(res.body.code).toBe('email_taken');
    }
  });

  it('an email that became a user after the invitation cannot accept it → 409', async () => {
    const owner = await signup(t);
    const invited = await invite(owner);
    await t
      .http()
      .post('/api/v1/console/signup')
      .send({ organization_name: 'Elsewhere', email: invited.email, password: PASSWORD })
      .expect(201);
    const res = await accept(invited.code).expect(409);
    expect(res.body.code).toBe('email_taken');
  });

  it('limits open invitations and members per organization (409 with a code)', async () => {
    // This app allows 3 open invitations and 3 members.
    const owner = await signup(t);
    await invite(owner);
    await invite(owner);
    const third = await invite(owner);
    const full = await t.http().post('/api/v1/console/invites').set(bearer(owner)).send({ email: email() }).expect(409);
    expect(full.body.code).toBe('invite_limit');
    await t.http().delete(`/api/v1/console/invites/${third.id}`).set(bearer(owner)).expect(204);

    const other = await signup(t);
    const pending = await invite(other);
    await addMember(other);
    await addMember(other);
    const noRoom = await t
      .http()
      .post('/api/v1/console/invites')
      .set(bearer(other))
      .send({ email: email() })
      .expect(409);
    expect(noRoom.body.code).toBe('member_limit');
    const late = await accept(pending.code).expect(409);
    expect(late.body.code).toBe('member_limit');
  });

  it.each([
    [{ email: 'not-an-email' }, 'email'],
    [{}, 'email'],
    [{ email: 'a@example.test', role: 'owner' }, 'role'],
  ])('invite refuses %j with a field error', async (body, field) => {
    const owner = await signup(t);
    const res = await t.http().post('/api/v1/console/invites').set(bearer(owner)).send(body).expect(400);
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
  });

  it.each([
    [{ code: 'x', password: 'short' }, 'password'],
    [{ password: PASSWORD }, 'code'],
    [{ code: 'x'.repeat(201), password: PASSWORD }, 'code'],
  ])('accept refuses %j with a field error', async (body, field) => {
    const res = await t.http().post('/api/v1/console/invites/accept').send(body).expect(400);
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
  });

  it('accepting is rate limited per client address, like signup', async () => {
    const limited = await startApp({ RATE_LIMIT_SIGNUPS_PER_HOUR: '2' });
    try {
      for (let i = 0; i < 2; i++) {
        await accept('nonsense', limited).expect(404);
      }
      const res = await accept('nonsense', limited).expect(429);
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    } finally {
      await limited.close();
    }
  });

  describe('removing a member', () => {
    it('ends their sessions at once and records console.member_removed', async () => {
      const owner = await signup(t);
      const member = await addMember(owner);
      const second = await t
        .http()
        .post('/api/v1/console/login')
        .send({ email: member.email, password: PASSWORD })
        .expect(200);
      await t.http().get('/api/v1/console/me').set(bearer(member)).expect(200);

      await t.http().delete(`/api/v1/console/members/${member.userId}`).set(bearer(owner)).expect(204);
      for (const token of [member.token, second.body.token]) {
        const res = await t.http().get('/api/v1/console/me').set('Authorization', `Bearer ${token}`).expect(401);
        expect(res.body.code).toBe('invalid_session');
      }
      await t.http().post('/api/v1/console/login').send({ email: member.email, password: PASSWORD }).expect(401);
      const members = await t.http().get('/api/v1/console/members').set(bearer(owner)).expect(200);
      expect(members.body.members.map((m: { id: string }) => m.id)).toEqual([owner.userId]);
      const [removed] = await events(owner.organizationId, 'console.member_removed');
      expect(removed.data).toEqual({
        member: {
          id: member.userId,
          email: member.email,
          created_at: expect.any(String),
          last_login_at: expect.any(String),
        },
        removed_by: owner.userId,
      });
    });

    it('never the last member (409 last_member), even oneself', async () => {
      const owner = await signup(t);
      const member = await addMember(owner);
      await t.http().delete(`/api/v1/console/members/${owner.userId}`).set(bearer(member)).expect(204);
      const res = await t.http().delete(`/api/v1/console/members/${member.userId}`).set(bearer(member)).expect(409);
      expect(res.body.code).toBe('last_member');
      await t.http().get('/api/v1/console/me').set(bearer(member)).expect(200);
    });

    it('two members removing each other at once: one remains', async () => {
      const owner = await signup(t);
      const member = await addMember(owner);
      const results = await Promise.all([
        t.http().delete(`/api/v1/console/members/${member.userId}`).set(bearer(owner)),
        t.http().delete(`/api/v1/console/members/${owner.userId}`).set(bearer(member)),
      ]);
      expect(results.map((r) => r.status)).toContain(204);
      const [{ count }] = await t.db.query(
        `SELECT count(*)::int AS count FROM console_users WHERE organization_id = $1`,
        [owner.organizationId],
      );
      expect(count).toBe(1);
    });

    it("another organization's member is not found", async () => {
      const owner = await signup(t);
      const stranger = await signup(t);
      const res = await t.http().delete(`/api/v1/console/members/${stranger.userId}`).set(bearer(owner)).expect(404);
      expect(res.body.code).toBe('member_not_found');
      await t.http().delete('/api/v1/console/members/not-a-uuid').set(bearer(owner)).expect(404);
    });
  });

  describe('changing the password', () => {
    it("ends the caller's other sessions at once; this one stays; the new password signs in", async () => {
      const owner = await signup(t);
      const other = await t
        .http()
        .post('/api/v1/console/login')
        .send({ email: owner.email, password: PASSWORD })
        .expect(200);
      await t
        .http()
        .post('/api/v1/console/password')
        .set(bearer(owner))
        .send({ current_password: PASSWORD, new_password: NEW_PASSWORD })
        .expect(204);
      const ended = await t
        .http()
        .get('/api/v1/console/me')
        .set('Authorization', `Bearer ${other.body.token}`)
        .expect(401);
      expect(ended.body.code).toBe('invalid_session');
      await t.http().get('/api/v1/console/me').set(bearer(owner)).expect(200);
      await t.http().post('/api/v1/console/login').send({ email: owner.email, password: PASSWORD }).expect(401);
      await t.http().post('/api/v1/console/login').send({ email: owner.email, password: NEW_PASSWORD }).expect(200);
    });

    it('a wrong current password is a 400 naming the field, and changes nothing', async () => {
      const owner = await signup(t);
      const other = await t
        .http()
        .post('/api/v1/console/login')
        .send({ email: owner.email, password: PASSWORD })
        .expect(200);
      const res = await t
        .http()
        .post('/api/v1/console/password')
        .set(bearer(owner))
        .send({ current_password: 'not my password', new_password: NEW_PASSWORD })
        .expect(400);
      expect(res.body).toMatchObject({ code: 'wrong_password', errors: [{ field: 'current_password' }] });
      await t.http().get('/api/v1/console/me').set('Authorization', `Bearer ${other.body.token}`).expect(200);
      await t.http().post('/api/v1/console/login').send({ email: owner.email, password: PASSWORD }).expect(200);
    });

    it('throttles wrong current passwords like login failures (429), even for the right one', async () => {
      const strict = await startApp({ LOGIN_FAILURE_LIMIT: '2' });
      try {
        const owner = await signup(strict);
        for (let i = 0; i < 2; i++) {
          await strict
            .http()
            .post('/api/v1/console/password')
            .set(bearer(owner))
            .send({ current_password: 'not my password', new_password: NEW_PASSWORD })
            .expect(400);
        }
        const res = await strict
          .http()
          .post('/api/v1/console/password')
          .set(bearer(owner))
          .send({ current_password: PASSWORD, new_password: NEW_PASSWORD })
          .expect(429);
        expect(res.body.code).toBe('rate_limited');
      } finally {
        await strict.close();
      }
    });

    it('refuses a new password that is too short', async () => {
      const owner = await signup(t);
      const res = await t
        .http()
        .post('/api/v1/console/password')
        .set(bearer(owner))
        .send({ current_password: PASSWORD, new_password: 'short' })
        .expect(400);
      expect(res.body.errors.map((e: { field: string }) => e.field)).toEqual(['new_password']);
    });
  });

  it('API keys get 403 on every teams route', async () => {
    const owner = await signup(t);
    const key = apiKey(await mintAdminKey(t, owner));
    const member = await addMember(owner);
    const invited = await invite(owner);
    const calls = [
      t.http().post('/api/v1/console/invites').set(key).send({ email: email() }),
      t.http().get('/api/v1/console/invites').set(key),
      t.http().delete(`/api/v1/console/invites/${invited.id}`).set(key),
      t.http().get('/api/v1/console/members').set(key),
      t.http().delete(`/api/v1/console/members/${member.userId}`).set(key),
      t
        .http()
        .post('/api/v1/console/password')
        .set(key)
        .send({ current_password: PASSWORD, new_password: NEW_PASSWORD }),
    ];
    for (const res of await Promise.all(calls)) {
      expect({ status: res.status, code: res.body.code }).toEqual({ status: 403, code: 'admin_key_not_allowed' });
    }
    await t.http().get('/api/v1/console/me').set(bearer(member)).expect(200);
  });
});

import { Client } from 'pg';
import { startApp, type TestApp } from '../support/app';
import { agentPair, enabledAgent, reply, submitTask, type Agent } from '../support/a2a';
import { urlFor } from '../support/database';
import { eventually } from '../support/eventually';
import { openEventStream } from '../support/event-stream';
import { apiKey, bearer, mintAdminKey, signup, type ConsoleAccount } from '../support/fixtures';
import { newEventId } from '../../src/events/event-id';

/**
 * The event list and stream (docs/api.md §14): the outbox of §8 in commit order, scoped
 * to the caller, resumable with Last-Event-ID without loss or repetition.
 */
describe('the event stream', () => {
  let t: TestApp;
  let acme: ConsoleAccount;
  let requester: Agent;
  let worker: Agent;
  let bystander: Agent;

  beforeAll(async () => {
    t = await startApp({ EVENTS_DISPATCHER: 'off', SSE_KEEPALIVE_MS: '200', PROTOCOL_MAX_OPEN_CALLS_PER_KEY: '3' });
    acme = await signup(t, 'Acme');
    requester = await enabledAgent(t, acme);
    worker = await enabledAgent(t, acme);
    bystander = await enabledAgent(t, acme);
  });
  afterAll(() => t.close());

  /** The organization's event ids in write order (one writer at a time here, so commit order too), after `since`. */
  const written = async (organizationId: string, since = 0): Promise<string[]> =>
    (
      (await t.db.query(`SELECT id FROM events WHERE organization_id = $1 AND seq > $2 ORDER BY seq`, [
        organizationId,
        since,
      ])) as Array<{ id: string }>
    ).map((row) => row.id);
  const lastSeq = async () =>
    Number(((await t.db.query(`SELECT coalesce(max(seq), 0) AS seq FROM events`)) as Array<{ seq: string }>)[0].seq);

  it('delivers task.created the moment a send commits', async () => {
    const stream = await openEventStream(t.baseUrl, apiKey(worker.key));
    expect(stream.response.status).toBe(200);
    expect(stream.response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const task = await submitTask(t, requester, worker, 'stream me');
    const event = await stream.next();
    expect(event).toMatchObject({
      event: 'message',
      data: { type: 'task.created', organization_id: acme.organizationId, data: { task: { id: task.id } } },
    });
    expect(event!.id).toBe(event!.data.id);
    await stream.close();
  });

  it('resumes after Last-Event-ID with exactly the events committed while disconnected, in order', async () => {
    const before = await lastSeq();
    const stream = await openEventStream(t.baseUrl, bearer(acme));
    const first = await submitTask(t, requester, worker, 'before the break');
    const sent = await written(acme.organizationId, before);
    const seen = await stream.take(sent.length);
    expect(seen.map((event) => event.id)).toEqual(sent);
    const lastSeen = sent[sent.length - 1];
    await stream.close();
    const mark = await lastSeq();

    // While disconnected: a reply, a new task, a webhook-free identity change.
    await reply(t, first.id, worker.key, {
      state: 'working',
      message: { parts: [{ kind: 'text', text: 'on it' }] },
    }).expect(200);
    await submitTask(t, requester, worker, 'while away');
    await t
      .http()
      .patch(`/api/v1/identities/${bystander.handle}`)
      .set(bearer(acme))
      .send({ description: 'changed while away' })
      .expect(200);
    const missed = await written(acme.organizationId, mark);
    expect(missed.length).toBeGreaterThanOrEqual(4);

    const resumed = await openEventStream(t.baseUrl, bearer(acme), { lastEventId: lastSeen });
    const replayed = await resumed.take(missed.length);
    expect(replayed.map((event) => event.id)).toEqual(missed);
    // Nothing repeated: the next event is the next new one.
    await submitTask(t, requester, worker, 'after the return');
    const next = await resumed.next();
    expect(missed).not.toContain(next!.id);
    expect(next!.data.type).toBe('task.created');
    await resumed.close();

    // `?after=` resumes the same way.
    const viaQuery = await openEventStream(t.baseUrl, bearer(acme), { query: `after=${lastSeen}` });
    expect((await viaQuery.take(missed.length)).map((event) => event.id)).toEqual(missed);
    await viaQuery.close();
  });

  it('an event whose transaction commits late is neither lost nor shown out of order', async () => {
    const stream = await openEventStream(t.baseUrl, bearer(acme));
    // A transaction takes an event id first and commits last.
    const late = new Client({ connectionString: urlFor(t.database) });
    await late.connect();
    const lateId = newEventId();
    await late.query('BEGIN');
    await late.query(`INSERT INTO events (id, type, organization_id, data) VALUES ($1, 'ping', $2, '{}')`, [
      lateId,
      acme.organizationId,
    ]);
    const task = await submitTask(t, requester, worker, 'committed first');
    const committedFirst = (await written(acme.organizationId, 0)).filter((id) => id !== lateId).slice(-1)[0];
    expect(committedFirst > lateId).toBe(true); // its id sorts after the late one's
    // Held back while the earlier transaction is open: not even listed yet.
    const listed = await t.http().get('/api/v1/events').set(bearer(acme)).expect(200);
    expect(listed.body.events.map((e: { id: string }) => e.id)).not.toContain(committedFirst);
    await late.query('COMMIT');
    await late.end();
    const events = await stream.take(2);
    expect(events.map((event) => event.id)).toEqual([lateId, committedFirst]);
    expect(events[1].data.data.task.id).toBe(task.id);
    // A reader that had stopped at the late event resumes with the one after it.
    const resumed = await openEventStream(t.baseUrl, bearer(acme), { lastEventId: lateId });
    expect((await resumed.next())!.id).toBe(committedFirst);
    await resumed.close();
    await stream.close();
  });

  it("an agent key sees only its own identity's events", async () => {
    const own = await openEventStream(t.baseUrl, apiKey(bystander.key));
    const org = await openEventStream(t.baseUrl, bearer(acme));
    await submitTask(t, requester, worker, 'not about the bystander');
    await t
      .http()
      .patch(`/api/v1/identities/${bystander.handle}`)
      .set(bearer(acme))
      .send({ display_name: 'Bystander' })
      .expect(200);
    // The organization sees both; the bystander's key only the second.
    const orgEvents = await org.take(2);
    expect(orgEvents.map((e) => e.data.type)).toEqual(['task.created', 'identity.updated']);
    const ownEvents = await own.take(1);
    expect(ownEvents[0].id).toBe(orgEvents[1].id);
    // Key events are the organization's only, never an identity's.
    await t
      .http()
      .post('/api/v1/api-keys')
      .set(bearer(acme))
      .send({ scope: 'agent', scoped_identity_id: bystander.id })
      .expect(201);
    expect((await org.next())!.data.type).toBe('api_key.created');
    await t
      .http()
      .patch(`/api/v1/identities/${bystander.handle}`)
      .set(bearer(acme))
      .send({ display_name: 'Bystander 2' })
      .expect(200);
    expect((await own.next())!.data).toMatchObject({
      type: 'identity.updated',
      data: { identity: { display_name: 'Bystander 2' } },
    });
    await own.close();
    await org.close();

    const listed = await t.http().get('/api/v1/events?limit=200').set(apiKey(bystander.key)).expect(200);
    expect(listed.body.events.length).toBeGreaterThan(0);
    for (const event of listed.body.events) {
      expect(event.type).toBe('identity.updated');
    }
    // Another organization sees none of acme's.
    const globex = await signup(t, 'Globex');
    const theirs = await t.http().get('/api/v1/events').set(bearer(globex)).expect(200);
    expect(
      theirs.body.events.filter((e: { organization_id: string }) => e.organization_id === acme.organizationId),
    ).toEqual([]);
    // And cannot resume after one of acme's events.
    await t.http().get(`/api/v1/events?after=${listed.body.events[0].id}`).set(bearer(globex)).expect(400);
  });

  it('lists newest first, filters by type and after, and pages with a cursor', async () => {
    const admin = apiKey(await mintAdminKey(t, acme));
    const all = await written(acme.organizationId, 0);
    const newestFirst = [...all].reverse();
    // The list shows events below the visibility horizon: a transaction still open elsewhere (the
    // dispatcher delivering the key's event, say) holds the newest back for a moment.
    const page1 = await eventually(
      () => t.http().get('/api/v1/events?limit=3').set(admin).expect(200),
      (res) => res.body.events[0]?.id === newestFirst[0],
    );
    expect(page1.body.events.map((e: { id: string }) => e.id)).toEqual(newestFirst.slice(0, 3));
    expect(Object.keys(page1.body.events[0])).toEqual(['id', 'type', 'created_at', 'organization_id', 'data']);
    const page2 = await t.http().get(`/api/v1/events?limit=3&cursor=${page1.body.next_cursor}`).set(admin).expect(200);
    expect(page2.body.events.map((e: { id: string }) => e.id)).toEqual(newestFirst.slice(3, 6));

    const created = await t.http().get('/api/v1/events?type=task.created&limit=200').set(admin).expect(200);
    expect(created.body.events.length).toBeGreaterThan(0);
    expect(new Set(created.body.events.map((e: { type: string }) => e.type))).toEqual(new Set(['task.created']));
    const two = await t
      .http()
      .get('/api/v1/events?type=task.created,identity.updated&limit=200')
      .set(admin)
      .expect(200);
    expect(new Set(two.body.events.map((e: { type: string }) => e.type))).toEqual(
      new Set(['task.created', 'identity.updated']),
    );

    const after = await t
      .http()
      .get(`/api/v1/events?after=${all[all.length - 3]}`)
      .set(admin)
      .expect(200);
    expect(after.body.events.map((e: { id: string }) => e.id)).toEqual(all.slice(-2).reverse());

    for (const bad of ['type=task.nope', 'after=evt_nope', 'cursor=abc', 'limit=0']) {
      const res = await t.http().get(`/api/v1/events?${bad}`).set(admin).expect(400);
      expect(res.headers['content-type']).toMatch(/problem\+json/);
    }
    await t
      .http()
      .get(`/api/v1/events?after=${newEventId()}`)
      .set(admin)
      .expect(400)
      .expect((res) => expect(res.body.code).toBe('unknown_event'));
    const stream = await fetch(`${t.baseUrl}/api/v1/events/stream`, {
      headers: { ...admin, 'Last-Event-ID': newEventId() },
    });
    expect(stream.status).toBe(400);
    expect(((await stream.json()) as { code: string }).code).toBe('unknown_event');
  });

  it('sends keep-alives while idle', async () => {
    const stream = await openEventStream(t.baseUrl, apiKey(bystander.key));
    await eventually(
      async () => stream.keepAlives,
      (count) => count >= 2,
    );
    await stream.close();
  });

  it('a revoked key ends its stream with an error event', async () => {
    const account = await signup(t);
    const agent = await enabledAgent(t, account);
    const stream = await openEventStream(t.baseUrl, apiKey(agent.key));
    await t.http().post('/api-keys/self/revoke').set(apiKey(agent.key)).expect(200);
    const last = await stream.next();
    expect(last).toMatchObject({ event: 'error', data: { status: 401, code: 'invalid_api_key' } });
    expect(await stream.next()).toBeNull();
  });

  it("a stream holds one of its key's open-call slots", async () => {
    const account = await signup(t);
    const agent = await enabledAgent(t, account);
    const open = [];
    for (let i = 0; i < 3; i++) {
      open.push(await openEventStream(t.baseUrl, apiKey(agent.key)));
    }
    const refused = await fetch(`${t.baseUrl}/api/v1/events/stream`, { headers: apiKey(agent.key) });
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { code: string }).code).toBe('too_many_open_calls');
    await open[0].close();
    await eventually(
      async () => (await fetch(`${t.baseUrl}/api/v1/events?limit=1`, { headers: apiKey(agent.key) })).status,
      (s) => s === 200,
    );
    const again = await eventually(
      () => openEventStream(t.baseUrl, apiKey(agent.key)),
      (s) => s.response.status === 200,
    );
    await again.close();
    for (const stream of open.slice(1)) {
      await stream.close();
    }
  });
});

describe('event retention', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startApp({
      EVENTS_RETENTION_DAYS: '30',
      EVENTS_PRUNE_INTERVAL_MS: '50',
      WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true',
    });
  });
  afterAll(() => t.close());

  it('deletes events older than EVENTS_RETENTION_DAYS, except those with a delivery still pending', async () => {
    const acme = await signup(t);
    const webhook = await t
      .http()
      .post('/api/v1/webhooks')
      .set(bearer(acme))
      .send({ url: 'https://hooks.example.invalid/x', events: ['ping'] })
      .expect(201);
    /** An event `ageDays` old, with a delivery of the given status in the same transaction (the pruner runs meanwhile). */
    const insert = (ageDays: number, delivery?: 'pending' | 'succeeded') =>
      t.db.transaction(async (em) => {
        const id = newEventId();
        await em.query(
          `INSERT INTO events (id, type, organization_id, data, created_at) VALUES ($1, 'ping', $2, '{}', now() - make_interval(days => $3))`,
          [id, acme.organizationId, ageDays],
        );
        if (delivery) {
          await em.query(
            `INSERT INTO deliveries (webhook_id, event_id, status, next_attempt_at) VALUES ($1, $2, $3::varchar, CASE WHEN $3::varchar = 'pending' THEN now() + interval '1 day' END)`,
            [webhook.body.id, id, delivery],
          );
        }
        return id;
      });
    const old = await insert(31);
    const recent = await insert(29);
    const pending = await insert(31, 'pending');
    const finished = await insert(40, 'succeeded');

    const left = async () =>
      (
        (await t.db.query(`SELECT id FROM events WHERE id = ANY($1)`, [[old, recent, pending, finished]])) as Array<{
          id: string;
        }>
      )
        .map((r) => r.id)
        .sort();
    expect(await eventually(left, (ids) => ids.length === 2)).toEqual([recent, pending].sort());
  });
});

describe('the event stream across instances', () => {
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    a = await startApp({ EVENTS_DISPATCHER: 'off' });
    b = await startApp({ EVENTS_DISPATCHER: 'off' }, a);
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  it('a send committed through A reaches a stream held by B at once, and resumes on A', async () => {
    const { requester, worker } = await agentPair(a);
    const onB = await openEventStream(b.baseUrl, apiKey(worker.key));
    const task = await submitTask(a, requester, worker, 'from A');
    const got = await onB.next();
    expect(got!.data).toMatchObject({ type: 'task.created', data: { task: { id: task.id } } });
    await onB.close();
    await reply(b, task.id, worker.key, { state: 'completed' }).expect(200);
    const onA = await openEventStream(a.baseUrl, apiKey(worker.key), { lastEventId: got!.id });
    expect((await onA.next())!.data).toMatchObject({
      type: 'task.status',
      data: { task: { id: task.id, status: { state: 'completed' } } },
    });
    await onA.close();
  });
});

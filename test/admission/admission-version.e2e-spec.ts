import { startApp, type TestApp } from '../support/app';
import { statementsFor } from '../support/statements';
import { agentPair, rpc, v03Message } from '../support/a2a';
import { apiKey, bearer, insertIdentity, unique } from '../support/fixtures';

/**
 * A protocol call's parties and rules are read once per pair and reused while
 * admission's version stays (the AdmissionVersion migration, AdmissionService.admitCall):
 * every committed change to an identity or a contact rule replaces it, whoever made it,
 * so the next call of any pair, on any instance, reads again.
 */
describe("admission's version: a pair read at the current version is not read again", () => {
  let t: TestApp;
  let other: TestApp;

  beforeAll(async () => {
    t = await startApp();
    // A second instance on the same database: its own kept pairs, the same version.
    other = await startApp({}, t);
  });
  afterAll(async () => {
    await other.close();
    await t.close();
  });

  type Pair = Awaited<ReturnType<typeof agentPair>>;
  const version = async () =>
    ((await t.db.query(`SELECT version FROM admission_version`)) as Array<{ version: string }>)[0].version;
  /** Whether `change` gave admission a new version. */
  const changes = async (change: () => Promise<unknown>) => {
    const before = await version();
    await change();
    return (await version()) !== before;
  };
  const send = (app: TestApp, pair: Pair, handle = pair.worker.handle) =>
    rpc(app, handle, pair.requester.key, 'message/send', {
      message: v03Message('hello'),
      configuration: { blocking: false },
    });
  /** How many times `app` reads a pair's parties for requests with `key`, from now until called. */
  const partiesReads = (app: TestApp, key: string) => {
    const stop = statementsFor(app, key);
    return () => stop().filter((statement) => /^\s*WITH asked AS/.test(statement)).length;
  };
  const blockRule = (pair: Pair) => ({
    identity: pair.worker.handle,
    direction: 'inbound',
    action: 'block',
    peer: { type: 'identity', handle: pair.requester.handle },
  });

  it('changes with every committed change to an identity or a contact rule, and with nothing else', async () => {
    const pair = await agentPair(t);
    expect(await changes(() => send(t, pair).expect(200))).toBe(false);
    expect(
      await changes(() =>
        t.db.query(`UPDATE api_keys SET last_used_at = now() WHERE identity_id = $1`, [pair.requester.id]),
      ),
    ).toBe(false);
    // A new identity changes no pair that was found (see "a handle nobody had", below).
    expect(await changes(() => insertIdentity(t, { organizationId: pair.acme.organizationId }))).toBe(false);
    expect(
      await changes(() =>
        t
          .http()
          .patch(`/api/v1/identities/${pair.worker.handle}/settings`)
          .set(apiKey(pair.worker.key))
          .send({ enabled: true })
          .expect(200),
      ),
    ).toBe(true);
    expect(
      await changes(() =>
        t.db.query(`UPDATE identities SET description = 'x' WHERE id = ANY($1)`, [[pair.worker.id, pair.requester.id]]),
      ),
    ).toBe(true);
    let ruleId = '';
    expect(
      await changes(async () => {
        ruleId = (await t.http().post('/api/v1/contact-rules').set(bearer(pair.acme)).send(blockRule(pair)).expect(201))
          .body.id;
      }),
    ).toBe(true);
    // A change rolled back changes nothing.
    expect(
      await changes(() =>
        t.db
          .transaction(async (manager) => {
            await manager.query(`DELETE FROM contact_rules WHERE id = $1`, [ruleId]);
            throw new Error('roll back');
          })
          .catch(() => undefined),
      ),
    ).toBe(false);
    expect(await changes(() => t.db.query(`DELETE FROM contact_rules WHERE id = $1`, [ruleId]))).toBe(true);
  });

  it('a second call of a pair reads no parties; a rule made since on another instance is heeded at once', async () => {
    const pair = await agentPair(t);
    await send(t, pair).expect(200);
    let reads = partiesReads(t, pair.requester.key);
    await send(t, pair).expect(200);
    await send(t, pair).expect(200);
    expect(reads()).toBe(0);

    await other.http().post('/api/v1/contact-rules').set(bearer(pair.acme)).send(blockRule(pair)).expect(201);
    reads = partiesReads(t, pair.requester.key);
    const denied = await send(t, pair).expect(403);
    expect(denied.body.error.data.reason).toBe('admission_denied');
    expect(reads()).toBe(1);
  });

  it('a denial answered from a kept read is recorded for the administrators all the same (docs/api.md §6)', async () => {
    const pair = await agentPair(t);
    await t.http().post('/api/v1/contact-rules').set(bearer(pair.acme)).send(blockRule(pair)).expect(201);
    const recorded = async () =>
      (
        (await t.db.query(
          `SELECT count(*)::int AS n FROM admission_decisions WHERE requester_id = $1 AND worker_id = $2 AND reason = 'blocked_by_worker'`,
          [pair.requester.id, pair.worker.id],
        )) as Array<{ n: number }>
      )[0].n;
    await send(t, pair).expect(403);
    const reads = partiesReads(t, pair.requester.key);
    await send(t, pair).expect(403);
    expect(reads()).toBe(0); // the pair as kept
    expect(await recorded()).toBe(2);
  });

  it('a worker disabled by a hand-written UPDATE is heeded at the next call', async () => {
    const pair = await agentPair(t);
    await send(t, pair).expect(200);
    await send(t, pair).expect(200);
    await t.db.query(`UPDATE identities SET enabled = false WHERE id = $1`, [pair.worker.id]);
    const res = await send(t, pair).expect(404);
    expect(res.body.error.data.reason).toBe('worker_not_found');
  });

  it('a handle nobody had is not kept: the identity then inserted for it (no version change) answers the next call', async () => {
    const pair = await agentPair(t);
    const handle = unique('later');
    expect((await send(t, pair, handle).expect(404)).body.error.data.reason).toBe('worker_not_found');
    await insertIdentity(t, { organizationId: pair.acme.organizationId, enabled: true, handle });
    await send(t, pair, handle).expect(200);
  });

  it('a transaction that changes many rows writes the version once; a TRUNCATE changes it too', async () => {
    const pair = await agentPair(t);
    /** How many times a transaction making `change` writes the version's row (pg_stat_xact_user_tables: the transaction's own counts). */
    const writes = (change: string) =>
      t.db.transaction(async (manager) => {
        const updates = async () =>
          Number(
            (
              (await manager.query(
                `SELECT n_tup_upd FROM pg_stat_xact_user_tables WHERE relname = 'admission_version'`,
              )) as Array<{ n_tup_upd: string }>
            )[0].n_tup_upd,
          );
        const before = await updates();
        await manager.query(change, [[pair.requester.id, pair.worker.id]]);
        await manager.query(`SET CONSTRAINTS ALL IMMEDIATE`); // the deferred triggers run now, before the count
        return (await updates()) - before;
      });
    expect(await writes(`UPDATE identities SET description = 'many' WHERE id = ANY($1)`)).toBe(1);
    expect(await changes(() => t.db.query(`TRUNCATE contact_rules`))).toBe(true);
  });
});

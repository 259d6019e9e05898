import { randomBytes, randomUUID } from 'node:crypto';
import { AdmissionRepository } from '../../src/admission/admission.repository';
import { newEventId } from '../../src/events/event-id';
import { RetentionService } from '../../src/retention/retention.service';
import { startApp, type TestApp } from '../support/app';
import { insertIdentity, signup, type ConsoleAccount } from '../support/fixtures';

/**
 * Retention (docs/operations.md): one pass deletes what has expired — events older than
 * EVENTS_RETENTION_DAYS, admission decisions older than DECISIONS_RETENTION_DAYS,
 * Idempotency-Key records older than 24 h, expired Console sessions and invitations,
 * budget counters of past days and months —
 * keeps everything fresh, and deletes in statements of at most RETENTION_BATCH_SIZE rows.
 */
describe('retention', () => {
  let t: TestApp;
  let acme: ConsoleAccount;

  beforeAll(async () => {
    // No dispatcher: no scheduled pass; the test runs one itself.
    t = await startApp({
      EVENTS_DISPATCHER: 'off',
      RETENTION_BATCH_SIZE: '3',
      EVENTS_RETENTION_DAYS: '30',
      DECISIONS_RETENTION_DAYS: '90',
    });
    acme = await signup(t);
  });
  afterAll(() => t.close());
  afterEach(() => jest.restoreAllMocks());

  const ids = async (table: string, column: string, values: string[]) =>
    (
      (await t.db.query(`SELECT ${column} AS id FROM ${table} WHERE ${column} = ANY($1)`, [values])) as Array<{
        id: string;
      }>
    )
      .map((r) => r.id)
      .sort();

  it('deletes old rows of every kind, keeps fresh ones, in bounded batches', async () => {
    const event = async (ageDays: number) => {
      const id = newEventId();
      await t.db.query(
        `INSERT INTO events (id, type, organization_id, data, created_at) VALUES ($1, 'ping', $2, '{}', now() - make_interval(days => $3))`,
        [id, acme.organizationId, ageDays],
      );
      return id;
    };
    const decision = async (ageDays: number) => {
      const [row] = await t.db.query(
        `INSERT INTO admission_decisions (requester_id, requester_handle, worker_id, worker_handle, reason, decided_by, created_at)
         VALUES ($1, 'r', $2, 'w', 'blocked_by_worker', 'worker', now() - make_interval(days => $3)) RETURNING id`,
        [randomUUID(), randomUUID(), ageDays],
      );
      return row.id as string;
    };
    const idempotencyKey = async (ageHours: number) => {
      const key = randomUUID();
      await t.db.query(
        `INSERT INTO idempotency_keys (scope, key, request_hash, created_at) VALUES ('test', $1, '\\x00', now() - make_interval(hours => $2))`,
        [key, ageHours],
      );
      return key;
    };
    const session = async (expiresInHours: number) => {
      const [row] = await t.db.query(
        `INSERT INTO console_sessions (user_id, token_hash, expires_at) VALUES ($1, $2, now() + make_interval(hours => $3)) RETURNING id`,
        [acme.userId, randomBytes(32), expiresInHours],
      );
      return row.id as string;
    };
    const invite = async (expiresInHours: number) => {
      const [row] = await t.db.query(
        `INSERT INTO console_invites (organization_id, email, email_key, code_hash, expires_at) VALUES ($1, 'x@example.test', 'x@example.test', $2, now() + make_interval(hours => $3)) RETURNING id`,
        [acme.organizationId, randomBytes(32), expiresInHours],
      );
      return row.id as string;
    };
    const ssoLogin = (expiresInMinutes: number) =>
      t.db.query(
        `INSERT INTO console_sso_logins (browser_hash, state, nonce, code_verifier, expires_at)
         VALUES ($1, 'retention', 'n', 'v', now() + make_interval(mins => $2))`,
        [randomBytes(32), expiresInMinutes],
      );
    const auditEntry = async (ageDays: number) => {
      const [row] = await t.db.query(
        `INSERT INTO audit_events (organization_id, actor_type, action, target_type, created_at)
         VALUES ($1, 'signup', 'identity.created', 'identity', now() - make_interval(days => $2)) RETURNING id`,
        [acme.organizationId, ageDays],
      );
      return row.id as string;
    };
    const many = <T>(n: number, make: () => Promise<T>) => Promise.all(Array.from({ length: n }, make));

    const oldEvents = await many(4, () => event(31));
    const freshEvents = await many(2, () => event(29));
    const oldDecisions = await many(7, () => decision(91));
    const freshDecisions = await many(2, () => decision(89));
    const oldKeys = await many(2, () => idempotencyKey(25));
    const freshKeys = await many(2, () => idempotencyKey(23));
    const oldSessions = await many(2, () => session(-1));
    const freshSessions = await many(1, () => session(1));
    const oldInvites = await many(2, () => invite(-1));
    const freshInvites = await many(1, () => invite(1));
    await many(2, () => ssoLogin(-1));
    await many(1, () => ssoLogin(5));
    const oldAudit = await many(2, () => auditEntry(366));
    const freshAudit = await many(1, () => auditEntry(364));

    const decisions = jest.spyOn(AdmissionRepository.prototype, 'pruneDecisions');
    const pruned = await t.app.get(RetentionService).runOnce();

    expect(pruned).toMatchObject({
      events: 4,
      admission_decisions: 7,
      idempotency_keys: 2,
      console_sessions: 2,
      console_invites: 2,
      console_sso_logins: 2,
      audit_events: 2,
    });
    const [{ left }] = await t.db.query(
      `SELECT count(*)::int AS left FROM console_sso_logins WHERE state = 'retention'`,
    );
    expect(left).toBe(1);
    expect(await ids('events', 'id', [...oldEvents, ...freshEvents])).toEqual([...freshEvents].sort());
    expect(await ids('admission_decisions', 'id', [...oldDecisions, ...freshDecisions])).toEqual(
      [...freshDecisions].sort(),
    );
    expect(await ids('idempotency_keys', 'key', [...oldKeys, ...freshKeys])).toEqual([...freshKeys].sort());
    expect(await ids('console_sessions', 'id', [...oldSessions, ...freshSessions])).toEqual([...freshSessions].sort());
    expect(await ids('console_invites', 'id', [...oldInvites, ...freshInvites])).toEqual([...freshInvites].sort());
    expect(await ids('audit_events', 'id', [...oldAudit, ...freshAudit])).toEqual([...freshAudit].sort());

    // Bounded: 7 rows at 3 a statement are 3 statements, and a short batch ends the kind.
    expect(decisions.mock.calls).toEqual([
      [90, 3],
      [90, 3],
      [90, 3],
    ]);
    expect(await Promise.all(decisions.mock.results.map((r) => r.value))).toEqual([3, 3, 1]);

    // A second pass finds nothing.
    expect(Object.values(await t.app.get(RetentionService).runOnce()).every((n) => n === 0)).toBe(true);
  });

  it('deletes budget counters a day after their day or month ended, keeps those still counted against', async () => {
    const { id: identityId } = await insertIdentity(t, { organizationId: acme.organizationId, enabled: true });
    // The service's clock (Date.now) set for each pass, so that no date here depends on when the test runs:
    // first noon of the 1st of this month (last month ended less than a day ago), then a day later.
    const real = new Date();
    const [y, m] = [real.getUTCFullYear(), real.getUTCMonth()];
    const firstNoon = Date.UTC(y, m, 1, 12);
    const runAt = async (clock: number) => {
      const spy = jest.spyOn(Date, 'now').mockReturnValue(clock);
      try {
        return (await t.app.get(RetentionService).runOnce()).usage_counters;
      } finally {
        spy.mockRestore();
      }
    };
    const counter = (period: 'day' | 'month', startsAt: number) =>
      t.db.query(`INSERT INTO usage_counters (identity_id, period, starts_at, tasks, cost) VALUES ($1, $2, $3, 1, 0)`, [
        identityId,
        period,
        new Date(startsAt),
      ]);
    // Days: the 1st's and the day before's (last month's last) are kept (the day before's for a day after it ended).
    const days = [0, -1, -2, -3, -40].map((ago) => Date.UTC(y, m, 1 + ago));
    // Months: this month's and last month's (a day into this one) are kept; two months back and more go.
    const months = [0, -1, -2, -13].map((ago) => Date.UTC(y, m + ago, 1));
    for (const at of days) {
      await counter('day', at);
    }
    for (const at of months) {
      await counter('month', at);
    }
    const kept = async () =>
      (
        (await t.db.query(
          `SELECT period, starts_at FROM usage_counters WHERE identity_id = $1 ORDER BY period, starts_at DESC`,
          [identityId],
        )) as Array<{ period: string; starts_at: Date }>
      ).map((row) => `${row.period} ${row.starts_at.toISOString()}`);
    const iso = (at: number) => new Date(at).toISOString();

    // RETENTION_BATCH_SIZE is 3: five rows to go are two statements.
    expect(await runAt(firstNoon)).toBe(5);
    expect(await kept()).toEqual([
      `day ${iso(days[0])}`,
      `day ${iso(days[1])}`,
      `month ${iso(months[0])}`,
      `month ${iso(months[1])}`,
    ]);
    // A second pass at the same time finds nothing more.
    expect(await runAt(firstNoon)).toBe(0);
    // A day later, last month has been over for more than a day: its counter goes, as does the day before the 1st's.
    expect(await runAt(firstNoon + 24 * 3600_000)).toBe(2);
    expect(await kept()).toEqual([`day ${iso(days[0])}`, `month ${iso(months[0])}`]);
  });

  it("a registered kind (the audit log's seam) runs in every pass; one that fails does not stop the others", async () => {
    const retention = t.app.get(RetentionService);
    let left = 5;
    retention.register({
      name: 'failing',
      prune: async () => {
        throw new Error('boom');
      },
    });
    retention.register({
      name: 'audit_events',
      prune: async (batch) => {
        const gone = Math.min(batch, left);
        left -= gone;
        return gone;
      },
    });
    const pruned = await retention.runOnce();
    expect(pruned).toMatchObject({ failing: 0, audit_events: 5 });
    expect(left).toBe(0);
  });
});

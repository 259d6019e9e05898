import { Injectable } from '@nestjs/common';
import { keyset, recordCreationPosition, type PageQuery } from '../common/pagination';
import { Database, type Tx } from '../database/database';
import { DummyValue, GenerateSql } from '../database/generate-sql';
import type { RecordOf } from '../database/row';
import { sql } from '../database/sql';
import type { Side } from '../admission/admission.decision';
import type { TaskPair } from '../ledger/task-records';
import type { Approval, ApprovalState, Remember } from './approval.entity';

/** An approval request as the service sees it, with how many tasks wait on it. */
export type ApprovalRecord = RecordOf<Approval> & { tasks: number };

/** What `attach` did for one asking side. */
export interface Attached {
  side: Side;
  /** Within the deciding organization's APPROVAL_MAX_PENDING (or its request was pending already). */
  fits: boolean;
  /** The request the task now waits on; null when the task waits on none (a side did not fit). */
  id: string | null;
  /** The request, when this task opened it. */
  opened: ApprovalRecord | null;
}

/** How a request is concluded: by a person (approved, denied) or by time (expired). */
export interface Conclusion {
  state: Exclude<ApprovalState, 'pending'>;
  remember: Remember | null;
  reason: string | null;
  decidedBy: { type: 'user' | 'key'; id: string; label: string | null } | null;
}

/** Named as ApprovalRecord's properties, so rows arrive as records. */
const APPROVAL_COLUMNS = sql.raw(
  `a.id, a.organization_id AS "organizationId", a.side, a.requester_identity_id AS "requesterIdentityId",
  a.requester_handle AS "requesterHandle", a.requester_organization_id AS "requesterOrganizationId",
  a.worker_identity_id AS "workerIdentityId", a.worker_handle AS "workerHandle",
  a.worker_organization_id AS "workerOrganizationId", a.state, a.remember, a.reason,
  a.decided_by_type AS "decidedByType", a.decided_by_id AS "decidedById", a.decided_by_label AS "decidedByLabel",
  a.first_task_id AS "firstTaskId", a.created_at AS "createdAt", a.expires_at AS "expiresAt", a.decided_at AS "decidedAt",
  (SELECT count(*)::int FROM approval_tasks w WHERE w.approval_id = a.id) AS tasks`,
);

const ASKED_COLUMNS = [
  ['side', 'text'],
  ['organization_id', 'uuid'],
] as const;

const PAIR: TaskPair = {
  requester: { id: DummyValue.UUID, handle: DummyValue.HANDLE, organizationId: DummyValue.UUID },
  worker: { id: DummyValue.UUID_2, handle: DummyValue.HANDLE, organizationId: DummyValue.UUID_2 },
};

/** Every statement on `approvals` and `approval_tasks`. */
@Injectable()
export class ApprovalsRepository {
  constructor(private readonly db: Database) {}

  /**
   * A new held task joins the pair's pending request of each asking side, or opens
   * it — one statement, in the send's transaction. A side's organization decides; one
   * that has `maxPending` requests pending (this pair's not among them) does not fit;
   * then the task joins none. Two sends of a pair racing to open a side's request meet on
   * `uq_approvals_pending`: the second joins the first's.
   */
  @GenerateSql({
    params: [DummyValue.UUID, PAIR, ['worker'], 72, 1000],
  })
  async attach(
    taskId: string,
    pair: TaskPair,
    sides: readonly Side[],
    ttlHours: number,
    maxPending: number,
    tx?: Tx,
  ): Promise<Attached[]> {
    const { requester: r, worker: w } = pair;
    const rows = await this.db.rows<{
      side: Side;
      fits: boolean;
      id: string | null;
      created: boolean;
      created_at: Date | null;
      expires_at: Date | null;
    }>(
      sql`
      WITH checked AS (
        SELECT a.side, a.organization_id,
               EXISTS (SELECT 1 FROM approvals p
                        WHERE p.requester_identity_id = ${r.id} AND p.worker_identity_id = ${w.id} AND p.side = a.side AND p.state = 'pending')
               OR (SELECT count(*) FROM approvals p WHERE p.organization_id = a.organization_id AND p.state = 'pending') < ${maxPending}
               AS fits
          FROM ${sql.rows(
            'a',
            ASKED_COLUMNS,
            sides.map((side) => [side, pair[side].organizationId]),
          )}),
      upserted AS (
        INSERT INTO approvals AS x (organization_id, side, requester_identity_id, requester_handle, requester_organization_id,
                                    worker_identity_id, worker_handle, worker_organization_id, first_task_id, expires_at)
        SELECT c.organization_id, c.side, ${r.id}, ${r.handle}, ${r.organizationId}, ${w.id}, ${w.handle}, ${w.organizationId},
               ${taskId}, now() + make_interval(hours => ${ttlHours}::int)
          FROM checked c WHERE NOT EXISTS (SELECT 1 FROM checked WHERE NOT fits)
        ON CONFLICT (requester_identity_id, worker_identity_id, side) WHERE state = 'pending' DO UPDATE SET state = x.state
        RETURNING x.id, x.side, (x.xmax = 0) AS created, x.created_at, x.expires_at),
      linked AS (INSERT INTO approval_tasks (approval_id, task_id) SELECT id, ${taskId} FROM upserted)
      SELECT c.side, c.fits, u.id, COALESCE(u.created, false) AS created, u.created_at, u.expires_at
        FROM checked c LEFT JOIN upserted u ON u.side = c.side`,
      tx,
    );
    return rows.map((row) => ({
      side: row.side,
      fits: row.fits,
      id: row.id,
      opened: row.created
        ? {
            id: row.id!,
            organizationId: pair[row.side].organizationId,
            side: row.side,
            requesterIdentityId: r.id,
            requesterHandle: r.handle,
            requesterOrganizationId: r.organizationId,
            workerIdentityId: w.id,
            workerHandle: w.handle,
            workerOrganizationId: w.organizationId,
            state: 'pending',
            remember: null,
            reason: null,
            decidedByType: null,
            decidedById: null,
            decidedByLabel: null,
            firstTaskId: taskId,
            createdAt: row.created_at!,
            expiresAt: row.expires_at!,
            decidedAt: null,
            tasks: 1,
          }
        : null,
    }));
  }

  /** A request by id, locked for its decision, and whether its time is up; null when there is none. */
  @GenerateSql({ params: [DummyValue.UUID] })
  async lock(id: string, tx: Tx): Promise<(ApprovalRecord & { expired: boolean }) | null> {
    return this.db.one(
      sql`SELECT ${APPROVAL_COLUMNS}, a.expires_at <= now() AS expired FROM approvals a WHERE a.id = ${id} FOR UPDATE OF a`,
      tx,
    );
  }

  /** The tasks waiting on these requests, in the order their locks are taken (by id: no two decisions deadlock). */
  @GenerateSql({ params: [[DummyValue.UUID]] })
  async waitingTasks(approvalIds: readonly string[], tx: Tx): Promise<string[]> {
    const rows = await this.db.rows<{ task_id: string }>(
      sql`SELECT DISTINCT task_id FROM approval_tasks WHERE approval_id = ANY(${[...approvalIds]}::uuid[]) ORDER BY task_id`,
      tx,
    );
    return rows.map((row) => row.task_id);
  }

  /**
   * Approved: the task (locked by the caller) stops waiting on this request; true when
   * it waited on it and waits on no other (the other side's) request.
   */
  @GenerateSql({ params: [DummyValue.UUID, DummyValue.UUID_2] })
  async unlink(approvalId: string, taskId: string, tx: Tx): Promise<boolean> {
    const row = await this.db.one<{ free: boolean }>(
      sql`
      WITH gone AS (DELETE FROM approval_tasks WHERE approval_id = ${approvalId} AND task_id = ${taskId} RETURNING task_id)
      SELECT EXISTS (SELECT 1 FROM gone)
             AND NOT EXISTS (SELECT 1 FROM approval_tasks o WHERE o.task_id = ${taskId} AND o.approval_id <> ${approvalId}) AS free`,
      tx,
    );
    return row!.free;
  }

  /** The task (locked by the caller: canceled, denied, expired) leaves every request it waited on; they stay as they are. */
  @GenerateSql({ params: [DummyValue.UUID] })
  async detachTask(taskId: string, tx: Tx): Promise<void> {
    await this.db.execute(sql`DELETE FROM approval_tasks WHERE task_id = ${taskId}`, tx);
  }

  /** Concludes these requests (locked by the caller); they are returned as they are now. */
  @GenerateSql({
    params: [
      [DummyValue.UUID],
      {
        state: 'approved',
        remember: 'always',
        reason: null,
        decidedBy: { type: 'key', id: DummyValue.UUID_2, label: 'ops' },
      } satisfies Conclusion,
    ],
  })
  async conclude(ids: readonly string[], conclusion: Conclusion, tx: Tx): Promise<ApprovalRecord[]> {
    const { state, remember, reason, decidedBy } = conclusion;
    return this.db.rows<ApprovalRecord>(
      sql`
      UPDATE approvals a SET state = ${state}, remember = ${remember}, reason = ${reason}, decided_by_type = ${decidedBy?.type ?? null},
             decided_by_id = ${decidedBy?.id ?? null}, decided_by_label = ${decidedBy?.label ?? null}, decided_at = now()
       WHERE a.id = ANY(${[...ids]}::uuid[])
      RETURNING ${APPROVAL_COLUMNS}`,
      tx,
    );
  }

  /** Up to `batch` pending requests whose time is up, oldest first, locked (skipping those another process holds). */
  @GenerateSql({ params: [500] })
  async lockExpired(batch: number, tx: Tx): Promise<string[]> {
    const rows = await this.db.rows<{ id: string }>(
      sql`
      SELECT id FROM approvals WHERE state = 'pending' AND expires_at <= now()
       ORDER BY expires_at LIMIT ${batch} FOR UPDATE SKIP LOCKED`,
      tx,
    );
    return rows.map((row) => row.id);
  }

  /** A page of the organization's requests, newest first; `identity`: the deciding identity's handle. */
  @GenerateSql(
    { name: 'all', params: [DummyValue.UUID, {}] },
    { name: 'filtered', params: [DummyValue.UUID, { state: 'pending', identity: DummyValue.HANDLE, limit: 20 }] },
  )
  async list(
    organizationId: string,
    filter: PageQuery & { state?: ApprovalState; identity?: string },
  ): Promise<{ items: ApprovalRecord[]; nextCursor: string | null }> {
    const page = keyset('a', filter);
    const rows = await this.db.rows<ApprovalRecord>(
      sql`SELECT ${APPROVAL_COLUMNS} FROM approvals a
          ${sql.where([
            sql`a.organization_id = ${organizationId}`,
            filter.state ? sql`a.state = ${filter.state}` : sql.empty,
            filter.identity === undefined
              ? sql.empty
              : sql`CASE a.side WHEN 'requester' THEN a.requester_handle ELSE a.worker_handle END = ${filter.identity}`,
            page.after,
          ])}
          ${page.tail}`,
    );
    return page.cut(rows, recordCreationPosition);
  }

  /** How many requests are pending, in every organization (the metric a2a_approvals_pending). */
  @GenerateSql({ params: [] })
  async pendingTotal(): Promise<number> {
    const row = await this.db.one<{ count: number }>(
      sql`SELECT count(*)::int AS count FROM approvals WHERE state = 'pending'`,
    );
    return row!.count;
  }

  /** How many requests the organization has pending. */
  @GenerateSql({ params: [DummyValue.UUID] })
  async pendingCount(organizationId: string): Promise<number> {
    const row = await this.db.one<{ count: number }>(
      sql`SELECT count(*)::int AS count FROM approvals WHERE organization_id = ${organizationId} AND state = 'pending'`,
    );
    return row!.count;
  }
}

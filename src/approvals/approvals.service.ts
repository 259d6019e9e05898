import { Inject, Injectable } from '@nestjs/common';
import type { Side } from '../admission/admission.decision';
import { ContactRulesService } from '../admission/contact-rules.service';
import { AuditService } from '../audit/audit.service';
import { requireGrant, requireRow, type Resource } from '../auth/access';
import { conflict } from '../common/app-error';
import type { AdminKeyPrincipal, ConsolePrincipal } from '../common/principal';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { ConsoleService } from '../console/console.service';
import { Database, type Tx } from '../database/database';
import type { WriteBatch } from '../database/write-batch';
import { EventsService } from '../events/events.service';
import { LedgerService, type Sent } from '../ledger/ledger.service';
import type { TaskPair } from '../ledger/task-records';
import { Metrics } from '../metrics/metrics';
import { UpstreamForwarder } from '../upstream/upstream-forwarder';
import type { Remember } from './approval.entity';
import { toApprovalView, type ApprovalPageView, type ApprovalView } from './approval.view';
import { ApprovalsRepository, type ApprovalRecord, type Conclusion } from './approvals.repository';
import type { ApproveDto, DenyDto } from './dto/decide-approval.dto';
import type { ListApprovalsQuery } from './dto/list-approvals.query';

type OrganizationPrincipal = AdminKeyPrincipal | ConsolePrincipal;

/** Who is asked, in the words of the requester, who reads the task's status message. */
const WHO: Record<Side, string> = { requester: 'your organization', worker: "the worker's organization" };
const who = (sides: readonly Side[]) => sides.map((side) => WHO[side]).join(' and ');

/** The identity that decides (its side's) and the one it decides about. */
function partiesOf(approval: ApprovalRecord) {
  const requester = {
    id: approval.requesterIdentityId,
    agentHandle: approval.requesterHandle,
    organizationId: approval.requesterOrganizationId,
  };
  const worker = {
    id: approval.workerIdentityId,
    agentHandle: approval.workerHandle,
    organizationId: approval.workerOrganizationId,
  };
  return approval.side === 'requester' ? { own: requester, peer: worker } : { own: worker, peer: requester };
}

/** A request as the access rules see it: its deciding organization's, through the asking identity. */
const ownership = (approval: ApprovalRecord): Resource => {
  const { own } = partiesOf(approval);
  return { owner: { organizationId: approval.organizationId, identityId: own.id } };
};

/**
 * Human approval at the delegation boundary (docs/api.md §16). A new task whose pair
 * needs a side's approval is held (the ledger keeps it from the worker's side) and
 * waits on that side's pending request; a person of the deciding organization
 * approves it (the tasks go to the worker as new work) or denies it (they are
 * rejected), once or — with a contact rule — always; undecided, it expires.
 */
@Injectable()
export class ApprovalsService {
  constructor(
    private readonly db: Database,
    private readonly repository: ApprovalsRepository,
    private readonly ledger: LedgerService,
    private readonly forwarder: UpstreamForwarder,
    private readonly rules: ContactRulesService,
    private readonly events: EventsService,
    private readonly audit: AuditService,
    private readonly consoleService: ConsoleService,
    private readonly metrics: Metrics,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    metrics.pendingApprovalsFrom(() => repository.pendingTotal());
  }

  /**
   * A send that started a task of a pair whose `sides` must approve it, in the send's
   * transaction: the task joins — or opens — each asking side's pending request (one
   * statement) and is held in `auth-required`, its status message saying whose
   * approval it waits for (never which rule); `approval.requested` goes to the
   * organization of each request it opened. When an organization already has
   * APPROVAL_MAX_PENDING requests pending, the task is rejected instead, saying so.
   */
  async hold(
    tx: Tx,
    created: Extract<Sent, { kind: 'created' }>,
    pair: TaskPair,
    sides: readonly Side[],
  ): Promise<void> {
    const { ttlHours, maxPending } = this.config.approvals;
    const attached = await this.repository.attach(created.task.id, pair, sides, ttlHours, maxPending, tx);
    const full = attached.filter((side) => !side.fits).map((side) => side.side);
    if (full.length > 0) {
      const note = `Rejected: ${who(full)} has too many approval requests waiting (at most ${maxPending}); try again later.`;
      return this.ledger.hold(created, 'rejected', note);
    }
    const opened = attached.flatMap((side) => (side.opened ? [side.opened] : []));
    const note = `This task waits for ${who(sides)} to approve it.`;
    await this.ledger.hold(created, 'auth-required', note, async (unit) => {
      for (const approval of opened) {
        await this.emit(unit, 'approval.requested', approval, toApprovalView(approval, created.message));
      }
      this.metrics.approvals(unit, 'requested', opened.length);
    });
  }

  /** A held task the requester canceled leaves the requests it waited on (they stay pending), in the cancel's transaction. */
  detach(tx: Tx, taskId: string): Promise<void> {
    return this.repository.detachTask(taskId, tx);
  }

  /** `GET /api/v1/approvals`: the organization's requests, newest first, and how many are pending. */
  async list(principal: OrganizationPrincipal, query: ListApprovalsQuery): Promise<ApprovalPageView> {
    requireGrant(principal, 'approval.read');
    const [page, pending] = await Promise.all([
      this.repository.list(principal.organizationId, query),
      this.repository.pendingCount(principal.organizationId),
    ]);
    const first = await this.ledger.firstMessages(page.items.map((approval) => approval.firstTaskId));
    return {
      approvals: page.items.map((approval) => toApprovalView(approval, first.get(approval.firstTaskId) ?? null)),
      next_cursor: page.nextCursor,
      pending,
    };
  }

  /** Approved: each task that waited only on this request goes to its worker as a new task. */
  approve(principal: OrganizationPrincipal, id: string, dto: ApproveDto): Promise<ApprovalView> {
    return this.decide(principal, id, 'approved', dto.remember, null);
  }

  /** Denied: the tasks waiting on it are rejected, with the person's reason when given. */
  deny(principal: OrganizationPrincipal, id: string, dto: DenyDto): Promise<ApprovalView> {
    return this.decide(principal, id, 'denied', dto.remember, dto.reason ?? null);
  }

  /**
   * The expiry pass (registered with the retention pass, where the dispatcher runs):
   * up to `batch` pending requests whose time is up expire, and their tasks are
   * rejected, in one transaction. How many expired.
   */
  async expire(batch: number): Promise<number> {
    return this.db.transaction(async (tx) => {
      const ids = await this.repository.lockExpired(batch, tx);
      if (ids.length === 0) {
        return 0;
      }
      await this.refuse(tx, ids, `Rejected: approval expired — nobody approved this task in time.`);
      const expired = await this.repository.conclude(
        ids,
        { state: 'expired', remember: null, reason: null, decidedBy: null },
        tx,
      );
      await this.emitDecided(tx, expired);
      this.metrics.approvals(tx, 'expired', expired.length);
      return expired.length;
    });
  }

  /**
   * A person's decision, in one transaction under the request's row lock: of two at
   * once, one wins and the other finds it decided (409); a request whose time is up
   * is expired whether or not the expiry pass has come by (409).
   */
  private async decide(
    principal: OrganizationPrincipal,
    id: string,
    state: 'approved' | 'denied',
    remember: Remember,
    reason: string | null,
  ): Promise<ApprovalView> {
    const decidedBy = await this.decider(principal);
    return this.db.transaction(async (tx) => {
      const approval = requireRow(principal, 'approval.decide', await this.repository.lock(id, tx), ownership);
      if (approval.state !== 'pending' || approval.expired) {
        const was = approval.state === 'pending' ? 'expired' : approval.state;
        throw conflict('approval_decided', `The approval request is ${was}; it can no longer be decided.`);
      }
      if (state === 'approved') {
        await this.release(tx, approval.id);
      } else {
        const declined = `Rejected: ${WHO[approval.side]} declined this task.`;
        await this.refuse(tx, [approval.id], reason ? `${declined} Reason: ${reason}` : declined);
      }
      const [decided] = await this.repository.conclude([approval.id], { state, remember, reason, decidedBy }, tx);
      if (remember === 'always') {
        const { own, peer } = partiesOf(decided);
        const direction = decided.side === 'requester' ? 'outbound' : 'inbound';
        // The rule answers for the skill the first task named, as the rule that asked did.
        const first = await this.ledger.taskById(decided.firstTaskId, { historyLength: 0, artifacts: false }, tx);
        const action = state === 'approved' ? 'allow' : 'block';
        await this.rules.remember(tx, own, peer, direction, action, first?.skill ?? null);
      }
      const [view] = await this.emitDecided(tx, [decided]);
      await this.audit.record(tx, {
        organizationId: decided.organizationId,
        action: `approval.${state}`,
        target: { type: 'approval', id: decided.id, label: partiesOf(decided).peer.agentHandle },
        before: { state: 'pending' },
        after: { state, remember, reason },
      });
      this.metrics.approvals(tx, state);
      return view;
    });
  }

  /**
   * The tasks that waited only on this request go to their workers, their forwards to
   * upstream agents queued. Each task is locked before it leaves the request, as a
   * cancel locks it before it leaves: a decision on its other request, or its cancel,
   * goes first or waits, and sees what the other did.
   */
  private async release(tx: Tx, approvalId: string): Promise<void> {
    for (const taskId of await this.repository.waitingTasks([approvalId], tx)) {
      const task = await this.ledger.lockHeld(tx, taskId);
      const free = await this.repository.unlink(approvalId, taskId, tx);
      if (task?.waiting && free) {
        const released = await task.release();
        await this.forwarder.queueMessage(tx, taskId, released.task, released.firstMessage.messageId);
      }
    }
  }

  /** The tasks waiting on these requests are rejected with `note`, and wait on no request any more (locked first, as above). */
  private async refuse(tx: Tx, approvalIds: readonly string[], note: string): Promise<void> {
    for (const taskId of await this.repository.waitingTasks(approvalIds, tx)) {
      const task = await this.ledger.lockHeld(tx, taskId);
      await this.repository.detachTask(taskId, tx);
      if (task?.waiting) {
        await task.refuse(note);
      }
    }
  }

  /** `approval.decided` for each, to its deciding organization; their views. */
  private async emitDecided(tx: Tx, approvals: readonly ApprovalRecord[]): Promise<ApprovalView[]> {
    const first = await this.ledger.firstMessages(
      approvals.map((approval) => approval.firstTaskId),
      tx,
    );
    const views: ApprovalView[] = [];
    for (const approval of approvals) {
      const view = toApprovalView(approval, first.get(approval.firstTaskId) ?? null);
      await this.emit(tx, 'approval.decided', approval, view);
      views.push(view);
    }
    return views;
  }

  /** An approval event: to the deciding organization only, about its asking identity. */
  private emit(
    unit: Tx | WriteBatch,
    type: 'approval.requested' | 'approval.decided',
    approval: ApprovalRecord,
    view: ApprovalView,
  ): Promise<void> {
    const participant = { identityId: partiesOf(approval).own.id, organizationId: approval.organizationId };
    return this.events.emitAllForParticipants(unit, [participant], [{ event: { type, data: { approval: view } } }]);
  }

  /** Who decides, as the request records it: a Console user with their email, or an admin key with its label. */
  private async decider(principal: OrganizationPrincipal): Promise<Conclusion['decidedBy']> {
    return principal.kind === 'console'
      ? { type: 'user', id: principal.id, label: await this.consoleService.email(principal.id) }
      : { type: 'key', id: principal.id, label: principal.label ?? null };
  }

  /** How many requests the organization has pending (the overview, docs/api.md §13, "The overview"). */
  pendingCount(organizationId: string): Promise<number> {
    return this.repository.pendingCount(organizationId);
  }
}

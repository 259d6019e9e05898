import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import { notFound } from '../common/app-error';
import { decodeCursor } from '../common/pagination';
import { LOGGER } from '../common/tokens';
import { Metrics } from '../metrics/metrics';
import type { AdminKeyPrincipal, ConsolePrincipal } from '../common/principal';
import { canAccess, identityParty, partyOf, requireAccess } from '../auth/access';
import { IdentitiesService, isServable } from '../identities/identities.service';
import type { Identity } from '../identities/identity.entity';
import {
  AdmissionRepository,
  type CallAsked,
  type CallParties,
  type DecisionScope,
  type DenialHour,
} from './admission.repository';
import { CoalescedLookup } from '../database/coalesced-lookup';
import {
  decide,
  decidePair,
  sideStance,
  standingDenial,
  type AdmissionDecision,
  type Side,
} from './admission.decision';
import { explain, toDecisionView, type AdmissionCheckResultView, type AdmissionDecisionView } from './admission.view';
import type { ContactRule } from './contact-rule.entity';
import { namesOf, toContactRuleView, type ContactRuleView } from './contact-rule.view';
import { ContactRulesService } from './contact-rules.service';
import type { CheckAdmissionDto } from './dto/check-admission.dto';
import type { ListDecisionsQuery } from './dto/list-decisions.query';
import type { Span } from '@opentelemetry/api';
import { inSpan } from '../tracing/tracing';

export type { AdmissionDecision, AdmissionReason } from './admission.decision';

/** Pairs whose parties and rules are kept for reuse (AdmissionService.admitCall); beyond, the oldest go. */
const KEPT_PAIRS = 10_000;

/**
 * A protocol call admitted to its worker: both parties and the rules between them as
 * read, and the pair's decision (decidePair: a call that names no skill of its own).
 * A send decides again for the skill it names, from the same read (`admitSkill`).
 */
export interface AdmittedCall {
  requester: Identity;
  worker: Identity;
  rules: readonly ContactRule[];
  decision: AdmissionDecision<ContactRule>;
}

/**
 * The decision for a call of the pair that names `skill` (null: none), from the call's
 * read: the pair's own when it was made for that skill and admits — the usual send,
 * naming none, of a pair admitted to calls naming none — else decided now from the
 * same rules, with no read.
 */
export function skillDecision(call: AdmittedCall, skill: string | null): AdmissionDecision<ContactRule> {
  return call.decision.skill === skill && call.decision.allowed
    ? call.decision
    : decide(call.requester, call.worker, call.rules, skill);
}

type OrganizationPrincipal = AdminKeyPrincipal | ConsolePrincipal;

/**
 * The second gate (docs/api.md §6). The protocol endpoint calls `admitCall` on every
 * call (and `admitSkill` on a send); the decision itself is the pure `decide`, fed by
 * one indexed query. Administrators ask `check` for an explanation and read the
 * recorded denials of their side.
 */
@Injectable()
export class AdmissionService {
  /** Protocol calls' parties and rules, read together for the calls that arrive together. */
  private readonly calls = new CoalescedLookup<CallAsked, CallParties>(
    (calls) => this.repository.callParties(calls),
    (call) => pairKey(call.requesterId, call.workerHandle),
  );

  /**
   * Each pair's parties and rules as last read, with admission's version they were
   * read at (only pairs where both parties were found: an identity's creation does
   * not change the version, a change to a pair does).
   */
  private readonly kept = new Map<string, CallParties>();

  constructor(
    private readonly repository: AdmissionRepository,
    private readonly rules: ContactRulesService,
    private readonly identities: IdentitiesService,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly metrics: Metrics,
  ) {}

  /** Decides whether requester may send work to worker; records the denial when denied. */
  async evaluate(requester: Identity, worker: Identity): Promise<AdmissionDecision<ContactRule>> {
    return inSpan('admission', {}, async (span) =>
      this.conclude(span, requester, worker, await this.decide(requester, worker)),
    );
  }

  /**
   * A protocol call's parties and admission, from one round trip (the hottest path):
   * the caller by id, the worker behind `workerHandle` when it may be served (else
   * null, and no decision), the rules between them, and the pair's decision
   * (decidePair), recorded when denied as `evaluate` records it. `version` is
   * admission's version as the call's key lookup read it
   * (AgentKeyPrincipal.admissionVersion): when the pair was last read at that version,
   * nothing it depends on has changed since — every change to an identity or a contact
   * rule replaces it, in its own transaction (the AdmissionVersion migration) — and that
   * read answers, with no round trip of its own.
   */
  async admitCall(requesterId: string, workerHandle: string, version?: string): Promise<AdmittedCall | null> {
    return inSpan('admission', {}, async (span) => {
      const kept = version === undefined ? undefined : this.kept.get(pairKey(requesterId, workerHandle));
      const read =
        kept !== undefined && kept.version === version ? kept : await this.callParties(requesterId, workerHandle);
      const { requester, worker } = partiesOf(read, requesterId, workerHandle);
      if (!requester || !worker || !isServable(worker)) {
        return null;
      }
      const decision = await this.conclude(span, requester, worker, decidePair(requester, worker, read.rules));
      return { requester, worker, rules: read.rules, decision };
    });
  }

  /**
   * A send's admission once it names its skill (docs/api.md §16): decided from the
   * call's read, with no read of its own. A denial is concluded as `admitCall`
   * concludes one — counted, on a span, recorded (with the skill).
   */
  async admitSkill(call: AdmittedCall, skill: string | null): Promise<AdmissionDecision<ContactRule>> {
    const decision = skillDecision(call, skill);
    if (decision.allowed) {
      return decision;
    }
    return inSpan('admission', {}, (span) => this.conclude(span, call.requester, call.worker, decision));
  }

  /** A call's decision made: on its span, in the metrics, and recorded when denied. */
  private async conclude(
    span: Span | undefined,
    requester: Identity,
    worker: Identity,
    decision: AdmissionDecision<ContactRule>,
  ): Promise<AdmissionDecision<ContactRule>> {
    span?.setAttributes({ 'a2a.admission.allowed': decision.allowed, 'a2a.admission.reason': decision.reason });
    this.metrics.admission(decision.allowed, decision.reason);
    if (!decision.allowed) {
      await this.record(requester, worker, decision);
    }
    return decision;
  }

  /**
   * `POST /api/v1/admission/check`: the decision for a call of the pair naming the
   * given skill (or none), explained to the caller's organization. Records nothing.
   * Unless one of the two is the caller's, both are 404s alike, so the endpoint does not
   * reveal other organizations' identities.
   */
  async check(principal: OrganizationPrincipal, dto: CheckAdmissionDto): Promise<AdmissionCheckResultView> {
    const [requester, worker] = await Promise.all([
      this.identities.findByHandle(dto.requester),
      this.identities.findByHandle(dto.worker),
    ]);
    const viewer = principal.organizationId;
    requireAccess(principal, 'admission.check', { requester: partyOf(requester), worker: partyOf(worker) });
    if (!requester || !worker) {
      throw notFound('identity_not_found', `No identity with handle '${requester ? dto.worker : dto.requester}'.`);
    }
    const decision = await this.decide(requester, worker, undefined, dto.skill ?? null);
    const parties = { requester, worker };
    const own_stance: AdmissionCheckResultView['own_stance'] = {};
    // Between two organizations only: within one, filter modes do not take part.
    for (const side of ['requester', 'worker'] as const) {
      if (parties[side].organizationId === viewer && requester.organizationId !== worker.organizationId) {
        own_stance[side] = sideStance(decision.effective[side], parties[side]);
      }
    }
    return {
      ...explain(
        decision,
        effectiveViews(decision, requester, worker),
        { requester: requester.organizationId, worker: worker.organizationId },
        viewer,
      ),
      own_stance,
    };
  }

  /**
   * `GET /api/v1/admission/decisions`: denials in which the caller's organization owns the
   * requester or the worker, newest first. Two keyset scans, one per side, merged.
   */
  async decisions(
    principal: OrganizationPrincipal,
    query: ListDecisionsQuery,
  ): Promise<{ decisions: AdmissionDecisionView[]; next_cursor: string | null }> {
    decodeCursor(query.cursor); // a bad cursor is a 400 whatever the filter finds
    const viewer = principal.organizationId;
    let scope: DecisionScope;
    if (query.identity === undefined) {
      scope = { organizationId: viewer };
    } else {
      const identity = await this.identities.findByHandle(query.identity);
      // As with the rules list, an identity the caller cannot see matches nothing.
      if (!canAccess(principal, 'decision.read', identityParty(identity))) {
        return { decisions: [], next_cursor: null };
      }
      scope = { identityId: identity!.id };
    }
    const page = await this.repository.listDecisions(scope, query);
    return { decisions: page.items.map((record) => toDecisionView(record, viewer)), next_cursor: page.nextCursor };
  }

  /**
   * The decision for a call naming `skill` (null: none; absent: a call that names no
   * skill of its own, decidePair), recording nothing: for a protocol call already
   * admitted (and recorded by `evaluate` if denied), re-checked while it stays open — a
   * stream or a blocking send.
   */
  async decide(
    requester: Identity,
    worker: Identity,
    rules?: readonly ContactRule[],
    skill?: string | null,
  ): Promise<AdmissionDecision<ContactRule>> {
    const read = standingDenial(requester, worker) ? [] : (rules ?? (await this.rules.between(requester, worker)));
    return skill === undefined ? decidePair(requester, worker, read) : decide(requester, worker, read, skill);
  }

  /**
   * An admitted call's decision asked again (its standing while it stays open) for the
   * skill it names (absent: a call that names none of its own), recording nothing: the
   * parties and rules read as `admitCall` reads them, shared with the calls that arrive
   * together. Null when a party's row is gone.
   */
  async recheck(
    requesterId: string,
    workerHandle: string,
    skill?: string | null,
  ): Promise<AdmissionDecision<ContactRule> | null> {
    const read = await this.callParties(requesterId, workerHandle);
    const { requester, worker } = partiesOf(read, requesterId, workerHandle);
    return requester && worker ? this.decide(requester, worker, read.rules, skill) : null;
  }

  /** The pair's parties and rules, read now (coalesced), and kept at their version when both parties were found. */
  private async callParties(requesterId: string, workerHandle: string): Promise<CallParties> {
    const read = (await this.calls.find({ requesterId, workerHandle }))!;
    const { requester, worker } = partiesOf(read, requesterId, workerHandle);
    const key = pairKey(requesterId, workerHandle);
    if (requester && worker && read.version !== null) {
      this.kept.delete(key); // re-inserted last: the oldest pairs go first
      this.kept.set(key, read);
      if (this.kept.size > KEPT_PAIRS) {
        this.kept.delete(this.kept.keys().next().value!);
      }
    } else {
      this.kept.delete(key);
    }
    return read;
  }

  /**
   * Writes a denial to the log that each side's administrators read. The call is
   * denied whether or not the write succeeds, so a failed write is logged, not thrown.
   */
  private async record(requester: Identity, worker: Identity, decision: AdmissionDecision<ContactRule>): Promise<void> {
    const effective = effectiveViews(decision, requester, worker);
    try {
      await this.repository.insertDecision({
        requesterId: requester.id,
        requesterHandle: requester.agentHandle,
        requesterOrganizationId: requester.organizationId,
        workerId: worker.id,
        workerHandle: worker.agentHandle,
        workerOrganizationId: worker.organizationId,
        skill: decision.skill,
        reason: decision.reason,
        decidedBy: decision.decidedBy!,
        ruleId: decision.rule?.id ?? null,
        requesterRule: effective.requester,
        workerRule: effective.worker,
      });
    } catch (error) {
      this.logger.warn(
        { err: error, requester: requester.id, worker: worker.id },
        'could not record an admission denial',
      );
    }
  }

  /** The organization's denials per hour since `since` (the overview, docs/api.md §13, "The overview"). */
  denialsPerHour(organizationId: string, since: Date): Promise<DenialHour[]> {
    return this.repository.denialsPerHour(organizationId, since);
  }
}

/** Each side's effective rule as reads show rules; the pair names no identity but its own two. */
function effectiveViews(
  decision: AdmissionDecision<ContactRule>,
  requester: Identity,
  worker: Identity,
): Record<Side, ContactRuleView | null> {
  const names = namesOf([requester, worker]);
  const view = (rule: ContactRule | null) => (rule ? toContactRuleView(rule, names) : null);
  return { requester: view(decision.effective.requester), worker: view(decision.effective.worker) };
}

const pairKey = (requesterId: string, workerHandle: string) => `${requesterId} ${workerHandle}`;

/** The caller (by id) and the worker (by handle) among a read's parties; either may be missing. */
function partiesOf(
  read: CallParties,
  requesterId: string,
  workerHandle: string,
): { requester: Identity | undefined; worker: Identity | undefined } {
  return {
    requester: read.parties.find((identity) => identity.id === requesterId),
    worker: read.parties.find((identity) => identity.agentHandle === workerHandle),
  };
}

import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { Logger } from 'pino';
import { LOGGER } from '../common/tokens';
import type { Identity } from '../identities/identity.entity';
import { AdmissionDecisionRecord } from './admission-decision.entity';
import { decide, standingDenial, type AdmissionDecision } from './admission.decision';
import type { ContactRule } from './contact-rule.entity';
import { namesOf, toContactRuleView } from './contact-rule.view';
import { ContactRulesService } from './contact-rules.service';

export type { AdmissionDecision, AdmissionReason } from './admission.decision';

/**
 * The second gate (CONTRACT §6). The protocol endpoint calls `evaluate` on every call;
 * the decision itself is the pure `decide`, fed by one indexed query.
 */
@Injectable()
export class AdmissionService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly rules: ContactRulesService,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** Decides whether requester may send work to worker; records the denial when denied. */
  async evaluate(requester: Identity, worker: Identity): Promise<AdmissionDecision<ContactRule>> {
    const decision = await this.decide(requester, worker);
    if (!decision.allowed) await this.record(requester, worker, decision);
    return decision;
  }

  private async decide(requester: Identity, worker: Identity): Promise<AdmissionDecision<ContactRule>> {
    const rules = standingDenial(requester, worker) ? [] : await this.rules.between(requester, worker);
    return decide(requester, worker, rules);
  }

  /**
   * Writes a denial to the log that each side's administrators read. The call is
   * denied whether or not the write succeeds, so a failed write is logged, not thrown.
   */
  private async record(requester: Identity, worker: Identity, decision: AdmissionDecision<ContactRule>): Promise<void> {
    const names = namesOf([requester, worker]);
    const view = (rule: ContactRule | null) => (rule ? toContactRuleView(rule, names) : null);
    try {
      await this.dataSource.getRepository(AdmissionDecisionRecord).insert({
        requesterId: requester.id,
        requesterHandle: requester.agentHandle,
        requesterOrganizationId: requester.organizationId,
        workerId: worker.id,
        workerHandle: worker.agentHandle,
        workerOrganizationId: worker.organizationId,
        reason: decision.reason,
        decidedBy: decision.decidedBy!,
        ruleId: decision.rule?.id ?? null,
        requesterRule: view(decision.effective.requester),
        workerRule: view(decision.effective.worker),
      });
    } catch (error) {
      this.logger.warn({ err: error, requester: requester.id, worker: worker.id }, 'could not record an admission denial');
    }
  }
}

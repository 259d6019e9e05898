import { Inject, Injectable } from '@nestjs/common';
import { notFound } from '../common/app-error';
import { APP_CONFIG, type AppConfig } from '../config/config';
import type { ConsolePrincipal } from '../common/principal';
import { Database } from '../database/database';
import { AuditService } from '../audit/audit.service';
import { EventsService } from '../events/events.service';
import { KeysService } from '../keys/keys.service';
import { generateClaimCode, hashClaimCode } from './claim-code';
import type { AgentSignupDto } from './dto/agent-signup.dto';
import { emitIdentityEvent } from './identity-events';
import { IdentitiesRepository } from './identities.repository';
import { IdentitiesService, identityTarget } from './identities.service';
import { toIdentityView, type IdentityView, type MintedKeyView } from './identity.view';

export interface AgentSignupView {
  identity: IdentityView;
  api_key: MintedKeyView;
  /** Shown once: the code a Console user enters to claim the identity. */
  claim: { code: string; expires_at: string };
}

/**
 * Agent signup and claim. An agent registers itself without a credential and gets
 * an agent key and a one-time claim code; a Console user claims the identity into
 * their organization with that code. Until then the identity belongs to no
 * organization and its key can only read and revoke itself.
 */
@Injectable()
export class AgentSignupService {
  private readonly baseUrl: string;
  private readonly claimCodeTtlHours: number;

  constructor(
    private readonly db: Database,
    private readonly identitiesService: IdentitiesService,
    private readonly identities: IdentitiesRepository,
    private readonly keys: KeysService,
    private readonly events: EventsService,
    private readonly audit: AuditService,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.baseUrl = config.publicBaseUrl;
    this.claimCodeTtlHours = config.claimCodeTtlHours;
  }

  /** `POST /api/v1/agent-signup`: an unclaimed identity, its agent key and a claim code. */
  async signup(dto: AgentSignupDto): Promise<AgentSignupView> {
    const code = generateClaimCode();
    return this.db.transaction(async (tx) => {
      const identity = await this.identitiesService.insert(tx, {
        handle: dto.agent_handle,
        organizationId: null,
        card: dto,
        claim: { codeHash: hashClaimCode(code), ttlHours: this.claimCodeTtlHours },
      });
      const { metadata, key } = await this.keys.mintWith(tx, {
        scope: 'agent',
        identityId: identity.id,
        createdBy: { type: 'signup', id: null },
      });
      return {
        identity: toIdentityView(identity, this.baseUrl),
        api_key: { ...metadata, key },
        claim: { code, expires_at: identity.claimExpiresAt!.toISOString() },
      };
    });
  }

  /**
   * `POST /api/v1/identities/claim`: moves the identity into the Console user's
   * organization (its keys follow: an agent key's organization is its identity's)
   * and clears the code. An unknown, used or expired code is one answer, 404
   * `claim_code_invalid`. An expired identity stays unclaimed with its handle
   * reserved: expiry releases nothing.
   */
  async claim(principal: ConsolePrincipal, claimCode: string): Promise<IdentityView> {
    return this.db.transaction(async (tx) => {
      const id = await this.identities.lockClaimable(hashClaimCode(claimCode), tx);
      if (!id) {
        throw notFound('claim_code_invalid', 'The claim code is unknown, already used or expired.');
      }
      // The card's provider becomes the organization, so the card changes.
      const claimed = toIdentityView((await this.identities.claim(id, principal.organizationId, tx))!, this.baseUrl);
      await this.audit.record(tx, {
        organizationId: claimed.organization_id,
        action: 'identity.claimed',
        target: identityTarget(claimed),
        before: { organization_id: null, claimed: false },
        after: claimed,
      });
      return emitIdentityEvent(this.events, tx, 'identity.claimed', claimed);
    });
  }
}

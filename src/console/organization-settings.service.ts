import { Injectable } from '@nestjs/common';
import { AuditService } from '../audit/audit.service';
import type { AdminKeyPrincipal, ConsolePrincipal } from '../common/principal';
import { Database, type Tx } from '../database/database';
import { ConsoleRepository } from './console.repository';
import type { UpdateOrganizationSettingsDto } from './dto/organization-settings.dto';
import type { Organization } from './organization.entity';
import { toOrganizationSettingsView, type OrganizationSettingsView } from './organization-settings.view';

/** The caller's organization's settings (docs/api.md §2): admin key or Console. */
@Injectable()
export class OrganizationSettingsService {
  constructor(
    private readonly db: Database,
    private readonly repository: ConsoleRepository,
    private readonly audit: AuditService,
  ) {}

  async get(principal: AdminKeyPrincipal | ConsolePrincipal): Promise<OrganizationSettingsView> {
    return toOrganizationSettingsView(await this.organization(principal.organizationId));
  }

  /** Sets the fields given; a real change is recorded in the audit log. */
  async update(
    principal: AdminKeyPrincipal | ConsolePrincipal,
    dto: UpdateOrganizationSettingsDto,
  ): Promise<OrganizationSettingsView> {
    return this.db.transaction(async (tx) => {
      const organization = await this.organization(principal.organizationId, tx, true);
      const before = toOrganizationSettingsView(organization);
      const max = dto.max_key_lifetime_days;
      const requireVerified = dto.require_verified_upstream_cards;
      const after: OrganizationSettingsView = {
        max_key_lifetime_days: max === undefined ? before.max_key_lifetime_days : max,
        require_verified_upstream_cards: requireVerified ?? before.require_verified_upstream_cards,
      };
      if (
        after.max_key_lifetime_days === before.max_key_lifetime_days &&
        after.require_verified_upstream_cards === before.require_verified_upstream_cards
      ) {
        return before;
      }
      await this.repository.updateOrganizationSettings(
        organization.id,
        {
          maxKeyLifetimeDays: after.max_key_lifetime_days,
          requireVerifiedUpstreamCards: after.require_verified_upstream_cards,
        },
        tx,
      );
      await this.audit.record(tx, {
        organizationId: organization.id,
        action: 'organization.settings_updated',
        target: { type: 'organization', id: organization.id, label: organization.name },
        before,
        after,
      });
      return after;
    });
  }

  /** The principal's organization (it exists: the principal was authenticated through it). */
  private async organization(id: string, tx?: Tx, lock = false): Promise<Organization> {
    // Locked for a change, so that two changes at once each record what they changed.
    const organization = lock
      ? await this.repository.lockOrganization(id, tx)
      : await this.repository.organization(id, tx);
    if (!organization) {
      throw new Error(`Organization ${id} not found`);
    }
    return organization;
  }
}

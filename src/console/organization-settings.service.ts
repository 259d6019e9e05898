import { Inject, Injectable } from '@nestjs/common';
import { AuditService } from '../audit/audit.service';
import { conflict } from '../common/app-error';
import type { AdminKeyPrincipal, ConsolePrincipal } from '../common/principal';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { Database, type Tx } from '../database/database';
import { failedWith } from '../database/errors';
import { ConsoleRepository } from './console.repository';
import type { UpdateOrganizationSettingsDto } from './dto/organization-settings.dto';
import { normalizeDomain } from './email-domains';
import type { Organization } from './organization.entity';
import { toOrganizationSettingsView, type OrganizationSettingsView } from './organization-settings.view';
import { SsoRepository } from './sso.repository';

const UNIQUE_VIOLATION = '23505';

/** The caller's organization's settings (docs/api.md §2, §13): admin key or Console. */
@Injectable()
export class OrganizationSettingsService {
  constructor(
    private readonly db: Database,
    private readonly repository: ConsoleRepository,
    private readonly sso: SsoRepository,
    private readonly audit: AuditService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async get(principal: AdminKeyPrincipal | ConsolePrincipal): Promise<OrganizationSettingsView> {
    const organization = await this.organization(principal.organizationId);
    return toOrganizationSettingsView(organization, await this.sso.emailDomains(organization.id));
  }

  /** Sets the fields given; a real change is recorded in the audit log. */
  async update(
    principal: AdminKeyPrincipal | ConsolePrincipal,
    dto: UpdateOrganizationSettingsDto,
  ): Promise<OrganizationSettingsView> {
    if (dto.password_sign_in === false && !this.config.consoleOidc) {
      throw conflict(
        'sso_not_configured',
        'Password sign-in cannot be turned off: single sign-on is not configured on this service.',
      );
    }
    const domains =
      dto.sso_email_domains && [...new Set(dto.sso_email_domains.map((domain) => normalizeDomain(domain)!))].sort();
    try {
      return await this.db.transaction(async (tx) => {
        const organization = await this.organization(principal.organizationId, tx, true);
        const before = toOrganizationSettingsView(organization, await this.sso.emailDomains(organization.id, tx));
        const after: OrganizationSettingsView = {
          max_key_lifetime_days:
            dto.max_key_lifetime_days === undefined ? before.max_key_lifetime_days : dto.max_key_lifetime_days,
          password_sign_in: dto.password_sign_in ?? before.password_sign_in,
          sso_email_domains: domains ?? before.sso_email_domains,
          require_verified_upstream_cards:
            dto.require_verified_upstream_cards ?? before.require_verified_upstream_cards,
        };
        if (JSON.stringify(after) === JSON.stringify(before)) {
          return before;
        }
        await this.repository.updateOrganizationSettings(
          organization.id,
          {
            maxKeyLifetimeDays: after.max_key_lifetime_days,
            passwordSignIn: after.password_sign_in,
            requireVerifiedUpstreamCards: after.require_verified_upstream_cards,
          },
          tx,
        );
        if (domains) {
          const taken = await this.sso.replaceEmailDomains(organization.id, domains, tx);
          if (taken.length > 0) {
            throw domainTaken(taken);
          }
        }
        await this.audit.record(tx, {
          organizationId: organization.id,
          action: 'organization.settings_updated',
          target: { type: 'organization', id: organization.id, label: organization.name },
          before,
          after,
        });
        return after;
      });
    } catch (error) {
      // Another organization took one of the domains at the same moment.
      if (failedWith(error, UNIQUE_VIOLATION)) {
        throw domainTaken([]);
      }
      throw error;
    }
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

function domainTaken(domains: string[]) {
  return conflict(
    'email_domain_taken',
    domains.length > 0
      ? `Another organization holds ${domains.join(', ')}.`
      : 'Another organization holds one of those domains.',
  );
}

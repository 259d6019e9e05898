import { Inject, Injectable } from '@nestjs/common';
import { AppError, badRequest, notFound } from '../common/app-error';
import type { AdminKeyPrincipal, ConsolePrincipal } from '../common/principal';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { AuditService } from '../audit/audit.service';
import { Database } from '../database/database';
import { brokenConstraint } from '../database/errors';
import { checkDestinationUrl } from '../events/address-policy';
import type { CreateTrustedIssuerDto } from './dto/create-trusted-issuer.dto';
import { IssuerKeys } from './issuer-keys';
import { toTrustedIssuerView, type TrustedIssuerView } from './trusted-issuer.view';
import { TrustedIssuersRepository } from './trusted-issuers.repository';

const MAX_SUBJECTS = 1000;

/** An organization's trusted issuers (docs/api.md §17): admin key or Console of the organization. */
@Injectable()
export class TrustedIssuersService {
  constructor(
    private readonly db: Database,
    private readonly repository: TrustedIssuersRepository,
    private readonly keys: IssuerKeys,
    private readonly audit: AuditService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async create(
    principal: AdminKeyPrincipal | ConsolePrincipal,
    dto: CreateTrustedIssuerDto,
  ): Promise<TrustedIssuerView> {
    // Their keys are fetched from these addresses: the webhook address rules apply.
    checkDestinationUrl(dto.issuer, this.config.webhooksAllowPrivateNetworks, 'invalid_issuer_url');
    if (dto.jwks_uri !== undefined) {
      checkDestinationUrl(dto.jwks_uri, this.config.webhooksAllowPrivateNetworks, 'invalid_issuer_url');
    }
    const subjects = Object.entries(dto.subjects);
    const invalid = subjects.find(
      ([subject, handle]) => subject === '' || subject.length > 1024 || typeof handle !== 'string',
    );
    if (subjects.length === 0 || subjects.length > MAX_SUBJECTS || invalid) {
      const message = `subjects must map 1 to ${MAX_SUBJECTS} subjects (each 1 to 1024 characters) to handles`;
      throw badRequest('validation_failed', message, [{ field: 'subjects', message }]);
    }
    const handles = [...new Set(subjects.map(([, handle]) => handle))];
    const existing = new Set(await this.repository.existingHandles(principal.organizationId, handles));
    const unknown = handles.filter((handle) => !existing.has(handle));
    if (unknown.length > 0) {
      const message = `subjects name handles that are not identities of your organization: ${unknown.slice(0, 5).join(', ')}`;
      throw badRequest('validation_failed', message, [{ field: 'subjects', message }]);
    }
    let record;
    try {
      record = await this.db.transaction(async (tx) => {
        const created = await this.repository.insert(
          {
            organizationId: principal.organizationId,
            issuer: dto.issuer,
            jwksUri: dto.jwks_uri ?? null,
            audience: dto.audience,
            subjectClaim: dto.subject_claim ?? 'sub',
            subjects: dto.subjects,
          },
          tx,
        );
        await this.audit.record(tx, {
          organizationId: principal.organizationId,
          action: 'trusted_issuer.created',
          target: { type: 'trusted_issuer', id: created.id, label: created.issuer },
          after: toTrustedIssuerView(created),
        });
        return created;
      });
    } catch (error) {
      if (brokenConstraint(error) === 'uq_trusted_issuers_issuer_audience') {
        throw new AppError(409, 'trusted_issuer_taken', 'That issuer and audience are trusted already.');
      }
      throw error;
    }
    // Its keys fetched now, so that its first token costs no fetch; a failure is retried by that token.
    void this.keys.prefetch(record.issuer, record.jwksUri).catch(() => undefined);
    return toTrustedIssuerView(record);
  }

  async list(principal: AdminKeyPrincipal | ConsolePrincipal): Promise<{ items: TrustedIssuerView[] }> {
    return { items: (await this.repository.list(principal.organizationId)).map(toTrustedIssuerView) };
  }

  async get(principal: AdminKeyPrincipal | ConsolePrincipal, id: string): Promise<TrustedIssuerView> {
    const record = await this.repository.find(id, principal.organizationId);
    if (!record) {
      throw notFound('trusted_issuer_not_found', 'No trusted issuer with that id in your organization.');
    }
    return toTrustedIssuerView(record);
  }

  /** Removes the trust: its tokens are refused from the next request, and its open calls end. */
  async remove(principal: AdminKeyPrincipal | ConsolePrincipal, id: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      const removed = await this.repository.delete(id, principal.organizationId, tx);
      if (!removed) {
        throw notFound('trusted_issuer_not_found', 'No trusted issuer with that id in your organization.');
      }
      await this.audit.record(tx, {
        organizationId: principal.organizationId,
        action: 'trusted_issuer.deleted',
        target: { type: 'trusted_issuer', id: removed.id, label: removed.issuer },
        before: toTrustedIssuerView(removed),
      });
    });
  }
}

import { Inject, Injectable } from '@nestjs/common';
import { AppError, badRequest, notFound } from '../common/app-error';
import type { AdminKeyPrincipal, ConsolePrincipal } from '../common/principal';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { AuditService } from '../audit/audit.service';
import { Database, type Tx } from '../database/database';
import { brokenConstraint } from '../database/errors';
import { checkDestinationUrl } from '../events/address-policy';
import type { CreateTrustedIssuerDto } from './dto/create-trusted-issuer.dto';
import type { UpdateTrustedIssuerDto } from './dto/update-trusted-issuer.dto';
import { checkInlineJwks, IssuerKeys } from './issuer-keys';
import { toTrustedIssuerView, type TrustedIssuerView } from './trusted-issuer.view';
import {
  TrustedIssuersRepository,
  type NewTrustedIssuer,
  type TrustedIssuerRecord,
} from './trusted-issuers.repository';

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
    if (dto.jwks !== undefined && dto.jwks_uri !== undefined) {
      throw bothKeySources();
    }
    const trust: NewTrustedIssuer = {
      organizationId: principal.organizationId,
      issuer: dto.issuer,
      jwksUri: dto.jwks_uri ?? null,
      jwks: dto.jwks === undefined ? null : checkInlineJwks(dto.jwks),
      audience: dto.audience,
      subjectClaim: dto.subject_claim ?? 'sub',
      subjects: dto.subjects,
    };
    await this.check(trust);
    const record = await this.saving(() =>
      this.db.transaction(async (tx) => {
        const created = await this.repository.insert(trust, tx);
        await this.audit.record(tx, {
          organizationId: principal.organizationId,
          action: 'trusted_issuer.created',
          target: { type: 'trusted_issuer', id: created.id, label: created.issuer },
          after: toTrustedIssuerView(created),
        });
        return created;
      }),
    );
    this.prefetch(record);
    return toTrustedIssuerView(record);
  }

  /**
   * Changes a trust: the fields given replace its own, checked as a new trust's are. Its
   * tokens are read against the trust as it is now from the next request (the trust is
   * read on every request); keys held for the keys it no longer names (an issuer, an
   * address, an inline set) are forgotten, and the new ones fetched.
   */
  async update(
    principal: AdminKeyPrincipal | ConsolePrincipal,
    id: string,
    dto: UpdateTrustedIssuerDto,
  ): Promise<TrustedIssuerView> {
    if (dto.jwks != null && dto.jwks_uri != null) {
      throw bothKeySources();
    }
    const jwks = dto.jwks == null ? dto.jwks : checkInlineJwks(dto.jwks);
    const { before, after } = await this.saving(() =>
      this.db.transaction(async (tx) => {
        const current = await this.repository.findForUpdate(id, principal.organizationId, tx);
        if (!current) {
          throw trustNotFound();
        }
        const trust: NewTrustedIssuer = {
          organizationId: current.organizationId,
          issuer: dto.issuer ?? current.issuer,
          // Giving one source of keys clears the other.
          jwksUri: dto.jwks_uri !== undefined ? dto.jwks_uri : jwks != null ? null : current.jwksUri,
          jwks: jwks !== undefined ? jwks : dto.jwks_uri != null ? null : current.jwks,
          audience: dto.audience ?? current.audience,
          subjectClaim: dto.subject_claim ?? current.subjectClaim,
          subjects: dto.subjects ?? current.subjects,
        };
        // Addresses are checked when they change (a trust saved under other rules keeps its own).
        await this.check(trust, trust.issuer !== current.issuer || trust.jwksUri !== current.jwksUri, tx);
        const updated = (await this.repository.update(id, trust, tx))!;
        await this.audit.record(tx, {
          organizationId: principal.organizationId,
          action: 'trusted_issuer.updated',
          target: { type: 'trusted_issuer', id: updated.id, label: updated.issuer },
          before: toTrustedIssuerView(current),
          after: toTrustedIssuerView(updated),
        });
        return { before: current, after: updated };
      }),
    );
    // Any change of where the keys come from (issuer, jwks_uri, inline jwks — either way between inline and
    // fetched) drops the keys held for the trust as it was, and fetches its keys afresh.
    if (
      before.issuer !== after.issuer ||
      before.jwksUri !== after.jwksUri ||
      JSON.stringify(before.jwks) !== JSON.stringify(after.jwks)
    ) {
      this.keys.forgetInline(after.id);
      await this.release(before);
      if (after.jwks === null) {
        this.keys.forget(after.issuer, after.jwksUri);
      }
      this.prefetch(after);
    }
    return toTrustedIssuerView(after);
  }

  async list(principal: AdminKeyPrincipal | ConsolePrincipal): Promise<{ items: TrustedIssuerView[] }> {
    return { items: (await this.repository.list(principal.organizationId)).map(toTrustedIssuerView) };
  }

  async get(principal: AdminKeyPrincipal | ConsolePrincipal, id: string): Promise<TrustedIssuerView> {
    const record = await this.repository.find(id, principal.organizationId);
    if (!record) {
      throw trustNotFound();
    }
    return toTrustedIssuerView(record);
  }

  /** Removes the trust: its tokens are refused from the next request, and its open calls end. */
  async remove(principal: AdminKeyPrincipal | ConsolePrincipal, id: string): Promise<void> {
    const removed = await this.db.transaction(async (tx) => {
      const removed = await this.repository.delete(id, principal.organizationId, tx);
      if (!removed) {
        throw trustNotFound();
      }
      await this.audit.record(tx, {
        organizationId: principal.organizationId,
        action: 'trusted_issuer.deleted',
        target: { type: 'trusted_issuer', id: removed.id, label: removed.issuer },
        before: toTrustedIssuerView(removed),
      });
      return removed;
    });
    this.keys.forgetInline(removed.id);
    await this.release(removed);
  }

  /**
   * A trust's fields as the API's rules want them: its addresses (when `urls`) follow the
   * webhook URL rules — its keys are fetched from them — and its subjects map to identities
   * of its organization.
   */
  private async check(trust: NewTrustedIssuer, urls = true, tx?: Tx): Promise<void> {
    if (urls) {
      const allowPrivate = this.config.webhooksAllowPrivateNetworks;
      checkDestinationUrl(trust.issuer, allowPrivate, 'invalid_issuer_url', 'issuer');
      if (trust.jwksUri !== null) {
        checkDestinationUrl(trust.jwksUri, allowPrivate, 'invalid_issuer_url', 'jwks_uri');
      }
    }
    const subjects = Object.entries(trust.subjects);
    const invalid = subjects.find(
      ([subject, handle]) => subject === '' || subject.length > 1024 || typeof handle !== 'string',
    );
    if (subjects.length === 0 || subjects.length > MAX_SUBJECTS || invalid) {
      const message = `subjects must map 1 to ${MAX_SUBJECTS} subjects (each 1 to 1024 characters) to handles`;
      throw badRequest('validation_failed', message, [{ field: 'subjects', message }]);
    }
    const handles = [...new Set(subjects.map(([, handle]) => handle))];
    const existing = new Set(await this.repository.existingHandles(trust.organizationId, handles, tx));
    const unknown = handles.filter((handle) => !existing.has(handle));
    if (unknown.length > 0) {
      const message = `subjects name handles that are not identities of your organization: ${unknown.slice(0, 5).join(', ')}`;
      throw badRequest('validation_failed', message, [{ field: 'subjects', message }]);
    }
  }

  /** Runs a write of a trust, turning a taken issuer and audience into its 409. */
  private async saving<T>(write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (error) {
      if (brokenConstraint(error) === 'uq_trusted_issuers_issuer_audience') {
        throw new AppError(409, 'trusted_issuer_taken', 'That issuer and audience are trusted already.');
      }
      throw error;
    }
  }

  /** Forgets the keys fetched for a trust as it was, unless another trust still names them. */
  private async release(trust: TrustedIssuerRecord): Promise<void> {
    if (trust.jwks === null && !(await this.repository.keysInUse(trust.issuer, trust.jwksUri))) {
      this.keys.forget(trust.issuer, trust.jwksUri);
    }
  }

  /** Its keys fetched now, so that its first token costs no fetch; a failure is retried by that token. */
  private prefetch(trust: TrustedIssuerRecord): void {
    if (trust.jwks === null) {
      void this.keys.prefetch(trust.issuer, trust.jwksUri).catch(() => undefined);
    }
  }
}

const trustNotFound = () =>
  notFound('trusted_issuer_not_found', 'No trusted issuer with that id in your organization.');

function bothKeySources() {
  const message = 'Give jwks or jwks_uri, not both.';
  return badRequest('validation_failed', message, [{ field: 'jwks', message }]);
}

import { Injectable } from '@nestjs/common';
import type { Tx } from '../database/database';
import { currentRequest } from './audit-context';
import { AuditRepository, type AuditListFilter, type AuditListRecord } from './audit.repository';

/**
 * The fields of each target type an entry may show before → after. An allow-list:
 * a field not named here (a key hash, a webhook secret, a password, a claim code, an
 * upstream's auth token) never reaches the log.
 */
export const AUDITED_FIELDS: Record<string, readonly string[]> = {
  api_key: ['label', 'description', 'scope', 'status', 'scoped_identity_id', 'prefix', 'expires_at'],
  organization: ['max_key_lifetime_days', 'password_sign_in', 'sso_email_domains'],
  identity: [
    'agent_handle',
    'organization_id',
    'display_name',
    'description',
    'skills',
    'claimed',
    'enabled',
    'publicly_discoverable',
    'allow_public_egress',
    'filter_mode',
    'require_skill',
    'status',
  ],
  contact_rule: ['identity', 'direction', 'action', 'peer', 'skills', 'note'],
  webhook: ['identity', 'url', 'events', 'description', 'status'],
  // `auth` as the view shows it: type, header name and whether a value is set — never the value.
  upstream: ['url', 'card_url', 'protocol_version', 'binding', 'streaming', 'auth'],
  trusted_issuer: ['issuer', 'jwks_uri', 'jwks', 'audience', 'subject_claim', 'subjects'],
  invitation: ['email', 'expires_at'],
  approval: ['state', 'remember', 'reason'],
  member: ['email'],
  console_user: ['email'],
};

/** Who made a change: a principal (or, at sign-in, the user signing in), or an agent's signup. */
export type AuditActor =
  'signup' | { kind: 'console'; id: string } | { kind: 'admin' | 'agent'; id: string; label?: string };

export interface AuditEntry {
  /** The organization the change belongs to; an entry without one is not recorded. */
  organizationId: string | null;
  /** Who made the change; by default the request's principal. */
  actor?: AuditActor;
  action: string;
  target: { type: string; id?: string | null; label?: string | null };
  /** The target's state before and after (any shape: only allow-listed fields are kept). */
  before?: object | null;
  after?: object | null;
}

export type AuditChanges = Record<string, { before: unknown; after: unknown }>;

/** The allow-listed fields that differ between `before` and `after`. */
export function auditChanges(targetType: string, before?: object | null, after?: object | null): AuditChanges {
  const fields = AUDITED_FIELDS[targetType] ?? [];
  const changes: AuditChanges = {};
  const b = (before ?? {}) as Record<string, unknown>;
  const a = (after ?? {}) as Record<string, unknown>;
  for (const field of fields) {
    if (!(field in b) && !(field in a)) {
      continue;
    }
    const was = before ? (b[field] ?? null) : null;
    const is = after ? (a[field] ?? null) : null;
    if (JSON.stringify(was) !== JSON.stringify(is)) {
      changes[field] = { before: was, after: is };
    }
  }
  return changes;
}

/** The audit log (docs/api.md §15): written in the change's transaction, read by admins. */
@Injectable()
export class AuditService {
  constructor(private readonly repository: AuditRepository) {}

  /**
   * Records one change in `tx`, so it exists exactly when the change commits (a change
   * that rolls back leaves no entry). Without `tx` (a failed sign-in, which changes
   * nothing) the entry is written on its own.
   */
  async record(tx: Tx | undefined, entry: AuditEntry): Promise<void> {
    const req = currentRequest();
    const actor: AuditActor | undefined = entry.actor ?? req?.principal;
    // No organization (an unclaimed identity's own key) or no principal (the CLI's bootstrap): nothing to attribute.
    if (!entry.organizationId || actor === undefined) {
      return;
    }
    await this.repository.insert(
      {
        organizationId: entry.organizationId,
        actorType: actor === 'signup' ? 'signup' : actor.kind === 'console' ? 'console_user' : 'api_key',
        actorId: actor === 'signup' ? null : actor.id,
        actorLabel: actor !== 'signup' && actor.kind !== 'console' ? (actor.label ?? null) : null,
        action: entry.action,
        targetType: entry.target.type,
        targetId: entry.target.id ?? null,
        targetLabel: entry.target.label ?? null,
        changes: auditChanges(entry.target.type, entry.before, entry.after),
        requestId: req?.id ?? null,
        clientAddress: req?.ip ?? null,
      },
      tx,
    );
  }

  async list(
    organizationId: string,
    filter: AuditListFilter,
  ): Promise<{ items: AuditListRecord[]; nextCursor: string | null }> {
    return this.repository.list(organizationId, filter);
  }
}

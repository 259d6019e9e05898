import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { HotQuery } from '../database/hot-query';
import { badRequest, conflict, notFound } from '../common/app-error';
import { decodeCursor, keysetAfter, pageLimit, pageOf } from '../common/pagination';
import { canAccess, identityParty, notVisible, requireAccess, requireRow } from '../auth/access';
import type { AdminKeyPrincipal, ConsolePrincipal, Principal } from '../auth/principal';
import { EventsService } from '../events/events.service';
import { IdentitiesService } from '../identities/identities.service';
import type { Identity } from '../identities/identity.entity';
import type { AdmissionParty } from './admission.decision';
import { ContactRule } from './contact-rule.entity';
import { namesOf, toContactRuleView, type ContactRuleView, type IdentityNames } from './contact-rule.view';
import type { CreateContactRuleDto, RulePeerDto } from './dto/create-contact-rule.dto';
import type { ListContactRulesQuery } from './dto/list-contact-rules.query';
import type { UpdateContactRuleDto } from './dto/update-contact-rule.dto';

/** CONTRACT §10: at most this many contact rules per identity. */
export const MAX_RULES_PER_IDENTITY = 10_000;

/** Rule columns under the entity's property names, so raw queries yield ContactRule-shaped rows. */
const RULE_COLUMNS = `
  id, identity_id AS "identityId", organization_id AS "organizationId", direction, action,
  peer_type AS "peerType", peer_identity_id AS "peerIdentityId", peer_organization_id AS "peerOrganizationId",
  note, created_at AS "createdAt", updated_at AS "updatedAt"`;
const SELECT_RULE = `SELECT ${RULE_COLUMNS} FROM contact_rules`;

/**
 * Every rule that can take part in admitting requester $1 to worker $2 (organizations
 * $3 and $4): the requester's outbound-or-both rules naming the worker or its
 * organization, and the worker's inbound-or-both rules naming the requester or its
 * organization. Four probes of the partial unique indexes, each reading at most two
 * rows, whatever the number of rules either identity has.
 */
export const RULES_BETWEEN = `
  ${SELECT_RULE} WHERE identity_id = $1 AND peer_type = 'identity' AND peer_identity_id = $2 AND direction IN ('outbound', 'both')
  UNION ALL
  ${SELECT_RULE} WHERE identity_id = $1 AND peer_type = 'organization' AND peer_organization_id = $4 AND direction IN ('outbound', 'both')
  UNION ALL
  ${SELECT_RULE} WHERE identity_id = $2 AND peer_type = 'identity' AND peer_identity_id = $1 AND direction IN ('inbound', 'both')
  UNION ALL
  ${SELECT_RULE} WHERE identity_id = $2 AND peer_type = 'organization' AND peer_organization_id = $3 AND direction IN ('inbound', 'both')`;

const UNIQUE_VIOLATION = '23505';
const FOREIGN_KEY_VIOLATION = '23503';

type OrganizationPrincipal = AdminKeyPrincipal | ConsolePrincipal;

/** Contact rules: CRUD for administrators, reads for the owner's key, the pair lookup for admission. */
@Injectable()
export class ContactRulesService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly hot: HotQuery,
    private readonly identities: IdentitiesService,
    private readonly events: EventsService,
  ) {}

  /** The rules the decision needs for this pair: one indexed round trip, a prepared statement (every protocol call). */
  between(requester: AdmissionParty, worker: AdmissionParty): Promise<ContactRule[]> {
    return this.hot.rows<ContactRule>('contact_rules_between', RULES_BETWEEN, [
      requester.id, worker.id, requester.organizationId, worker.organizationId,
    ]);
  }

  /**
   * Admin key and Console: the organization's rules. Agent key: its own identity's.
   * An `identity` filter naming an identity the caller cannot see matches nothing,
   * as the keys list does.
   */
  async list(principal: Principal, query: ListContactRulesQuery): Promise<{ rules: ContactRuleView[]; next_cursor: string | null }> {
    const limit = pageLimit(query);
    const cursor = decodeCursor(query.cursor);
    const owner = await this.ownerFilter(principal, query.identity);
    if (owner === null) return { rules: [], next_cursor: null };
    const params: unknown[] = [principal.organizationId];
    const where = ['organization_id = $1'];
    if (owner) where.push(`identity_id = $${params.push(owner)}`);
    if (query.direction) where.push(`direction = $${params.push(query.direction)}`);
    if (query.action) where.push(`action = $${params.push(query.action)}`);
    where.push(...keysetAfter('r', cursor, params));
    const rows = (await this.dataSource.query(
      `${SELECT_RULE} r WHERE ${where.join(' AND ')} ORDER BY created_at DESC, id DESC LIMIT ${limit + 1}`,
      params,
    )) as ContactRule[];
    const page = pageOf(rows, limit, (row) => ({ at: row.createdAt.toISOString(), id: row.id }));
    return { rules: await this.present(page.items), next_cursor: page.nextCursor };
  }

  async create(principal: OrganizationPrincipal, dto: CreateContactRuleDto): Promise<ContactRuleView> {
    const found = await this.identities.findByHandle(dto.identity);
    const owner = requireRow(principal, 'rule.create', found?.status === 'active' ? found : null, identityParty, dto.identity);
    const peer = await this.resolvePeer(owner, dto.peer);
    const names = namesOf(peer.identity ? [owner, peer.identity] : [owner]);
    return this.dataSource.transaction(async (em) => {
      // Serializes rule creation per owner, so concurrent creates cannot pass the limit together.
      await em.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [owner.id]);
      const [{ count }] = (await em.query(`SELECT count(*)::int AS count FROM contact_rules WHERE identity_id = $1`, [owner.id])) as Array<{ count: number }>;
      if (count >= MAX_RULES_PER_IDENTITY) {
        throw conflict('rule_limit_reached', `An identity can have at most ${MAX_RULES_PER_IDENTITY} contact rules; delete one first.`);
      }
      const [inserted] = (await em.query(
        `INSERT INTO contact_rules (identity_id, organization_id, direction, action, peer_type, peer_identity_id, peer_organization_id, note)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${RULE_COLUMNS}`,
        [owner.id, owner.organizationId, dto.direction, dto.action, dto.peer.type, peer.identity?.id ?? null, peer.organizationId, dto.note ?? ''],
      ).catch(ruleConflict)) as ContactRule[];
      return this.emitted(em, 'contact_rule.created', inserted, names);
    });
  }

  /**
   * Action, direction and note; a direction that would duplicate another rule is a
   * 409. `updated_at` moves only when a value actually changes.
   */
  async update(principal: OrganizationPrincipal, id: string, dto: UpdateContactRuleDto): Promise<ContactRuleView> {
    const names = await this.namesOfRule(principal, id);
    return this.dataSource.transaction(async (em) => {
      const [rows] = (await em.query(
        `UPDATE contact_rules
            SET direction = COALESCE($3, direction), action = COALESCE($4, action), note = COALESCE($5, note),
                updated_at = CASE WHEN (direction, action, note) IS DISTINCT FROM (COALESCE($3, direction), COALESCE($4, action), COALESCE($5, note))
                                  THEN now() ELSE updated_at END
          WHERE id = $1 AND organization_id = $2
      RETURNING ${RULE_COLUMNS}, (updated_at = now()::timestamptz(3)) AS changed`,
        [id, principal.organizationId, dto.direction ?? null, dto.action ?? null, dto.note ?? null],
      ).catch(ruleConflict)) as [Array<ContactRule & { changed: boolean }>, number];
      if (rows.length === 0) throw ruleNotFound();
      const { changed, ...rule } = rows[0];
      return changed ? this.emitted(em, 'contact_rule.updated', rule, names) : toContactRuleView(rule, names);
    });
  }

  async remove(principal: OrganizationPrincipal, id: string): Promise<void> {
    const names = await this.namesOfRule(principal, id);
    await this.dataSource.transaction(async (em) => {
      const [rows] = (await em.query(
        `DELETE FROM contact_rules WHERE id = $1 AND organization_id = $2 RETURNING ${RULE_COLUMNS}`, [id, principal.organizationId],
      )) as [ContactRule[], number];
      if (rows.length === 0) throw ruleNotFound();
      await this.emitted(em, 'contact_rule.deleted', rows[0], names);
    });
  }

  /** The rule as every read shows it, reported to its owner's organization in the change's transaction. */
  private async emitted(em: EntityManager, type: 'contact_rule.created' | 'contact_rule.updated' | 'contact_rule.deleted', rule: ContactRule, names: IdentityNames): Promise<ContactRuleView> {
    const view = toContactRuleView(rule, names);
    await this.events.emit(em, { type, organizationId: rule.organizationId, identityIds: [rule.identityId], data: { rule: view } });
    return view;
  }

  /**
   * The handles a rule of the organization names (its owner and peer never change),
   * read before the change's transaction opens; 404 when there is no such rule.
   */
  private async namesOfRule(principal: OrganizationPrincipal, id: string): Promise<IdentityNames> {
    const [rule] = (await this.dataSource.query(`${SELECT_RULE} WHERE id = $1`, [id])) as ContactRule[];
    requireAccess(principal, 'rule.write', rule ? { owner: { organizationId: rule.organizationId, identityId: rule.identityId } } : null);
    return namesOf(await this.identities.findByIds(rule.peerIdentityId ? [rule.identityId, rule.peerIdentityId] : [rule.identityId]));
  }

  /** Shows rules with the handles they name, looked up in one query. */
  private async present(rules: ContactRule[]): Promise<ContactRuleView[]> {
    const ids = rules.flatMap((rule) => (rule.peerIdentityId ? [rule.identityId, rule.peerIdentityId] : [rule.identityId]));
    const names = namesOf(await this.identities.findByIds(ids));
    return rules.map((rule) => toContactRuleView(rule, names));
  }

  /** The owner id a list is limited to: undefined for the whole organization, null for nothing. */
  private async ownerFilter(principal: Principal, handle: string | undefined): Promise<string | undefined | null> {
    if (handle === undefined) return principal.kind === 'agent' ? principal.identity.id : undefined;
    const owner = await this.identities.findByHandle(handle);
    return canAccess(principal, 'rule.read', identityParty(owner)) ? owner!.id : null;
  }

  /**
   * A peer identity must exist and not be deleted; it may belong to any organization
   * (or none yet). A peer organization's existence is left to the foreign key.
   */
  private async resolvePeer(owner: Identity, peer: RulePeerDto): Promise<{ identity?: Identity; organizationId: string | null }> {
    const stray = peer.type === 'identity' ? 'organization_id' : 'handle';
    if (peer[stray] !== undefined) {
      throw badRequest('validation_failed', `A peer of type ${peer.type} does not take ${stray}.`, [
        { field: `peer.${stray}`, message: `peer.${stray} must be omitted when peer.type is ${peer.type}` },
      ]);
    }
    if (peer.type === 'organization') return { organizationId: peer.organization_id! };
    const identity = await this.identities.findByHandle(peer.handle!);
    if (!identity || identity.status !== 'active') throw notFound('peer_not_found', `No identity with handle '${peer.handle}'.`);
    if (identity.id === owner.id) throw badRequest('invalid_peer', 'A contact rule cannot name its own identity as the peer.');
    return { identity, organizationId: null };
  }
}

const ruleNotFound = () => notVisible('rule.write');

/** The constraint violations a rule write can meet, as the client errors they are. */
function ruleConflict(error: unknown): never {
  const code = (error as { driverError?: { code?: string } }).driverError?.code;
  if (code === UNIQUE_VIOLATION) {
    throw conflict('contact_rule_exists', 'The identity already has a rule for that peer in that direction.');
  }
  if (code === FOREIGN_KEY_VIOLATION) throw notFound('peer_not_found', 'No organization with that id.');
  throw error;
}

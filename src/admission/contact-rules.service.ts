import { Injectable } from '@nestjs/common';
import { Database, type Tx } from '../database/database';
import { badRequest, conflict, notFound } from '../common/app-error';
import { decodeCursor } from '../common/pagination';
import { canAccess, identityParty, notVisible, requireAccess, requireRow } from '../auth/access';
import type { AdminKeyPrincipal, ConsolePrincipal, Principal } from '../common/principal';
import { AuditService } from '../audit/audit.service';
import { EventsService } from '../events/events.service';
import { IdentitiesService } from '../identities/identities.service';
import type { Identity } from '../identities/identity.entity';
import { cardSkillIds } from '../identities/card-skills';
import { effectiveRule, type AdmissionParty, type RuleDirection } from './admission.decision';
import type { ContactRule } from './contact-rule.entity';
import { AdmissionRepository, type NewContactRule } from './admission.repository';
import { namesOf, toContactRuleView, type ContactRuleView, type IdentityNames } from './contact-rule.view';
import type { CreateContactRuleDto, RulePeerDto } from './dto/create-contact-rule.dto';
import type { ListContactRulesQuery } from './dto/list-contact-rules.query';
import type { UpdateContactRuleDto } from './dto/update-contact-rule.dto';

/** docs/api.md §10: at most this many contact rules per identity. */
export const MAX_RULES_PER_IDENTITY = 10_000;

const UNIQUE_VIOLATION = '23505';
const FOREIGN_KEY_VIOLATION = '23503';

type OrganizationPrincipal = AdminKeyPrincipal | ConsolePrincipal;

/** An identity a rule names: its id, handle and organization. */
export interface RuleIdentity {
  id: string;
  agentHandle: string;
  organizationId: string;
}

/** A rule as the audit log names it: its id and its owner's handle. */
const ruleTarget = (view: ContactRuleView) => ({ type: 'contact_rule', id: view.id, label: view.identity });

/** Contact rules: CRUD for administrators, reads for the owner's key, the pair lookup for admission. */
@Injectable()
export class ContactRulesService {
  constructor(
    private readonly db: Database,
    private readonly repository: AdmissionRepository,
    private readonly identities: IdentitiesService,
    private readonly events: EventsService,
    private readonly audit: AuditService,
  ) {}

  /** The rules the decision needs for this pair: one indexed round trip, a prepared statement (every protocol call). */
  between(requester: AdmissionParty, worker: AdmissionParty): Promise<ContactRule[]> {
    return this.repository.rulesBetween(requester, worker);
  }

  /**
   * Admin key and Console: the organization's rules. Agent key: its own identity's.
   * An `identity` filter naming an identity the caller cannot see matches nothing,
   * as the keys list does.
   */
  async list(
    principal: Principal,
    query: ListContactRulesQuery,
  ): Promise<{ rules: ContactRuleView[]; next_cursor: string | null }> {
    decodeCursor(query.cursor); // a bad cursor is a 400 whatever the filter finds
    const owner = await this.ownerFilter(principal, query.identity);
    if (owner === null) {
      return { rules: [], next_cursor: null };
    }
    const page = await this.repository.listRules(
      principal.organizationId,
      { identityId: owner, direction: query.direction, action: query.action },
      query,
    );
    return { rules: await this.present(page.items), next_cursor: page.nextCursor };
  }

  async create(principal: OrganizationPrincipal, dto: CreateContactRuleDto): Promise<ContactRuleView> {
    const found = await this.identities.findByHandle(dto.identity);
    const owner = requireRow(
      principal,
      'rule.create',
      found?.status === 'active' ? found : null,
      identityParty,
      dto.identity,
    );
    const peer = await this.resolvePeer(owner, dto.peer);
    const skills = ruleSkills(dto.skills ?? []);
    requireCardSkills(skills, dto.direction, owner, peer.identity);
    const names = namesOf(peer.identity ? [owner, peer.identity] : [owner]);
    return this.db.transaction(async (tx) => {
      // Serializes rule creation per owner, so concurrent creates cannot pass the limit together.
      await this.repository.lockRulesOf(owner.id, tx);
      return this.insert(
        tx,
        {
          identityId: owner.id,
          organizationId: owner.organizationId!,
          direction: dto.direction,
          action: dto.action,
          peerType: dto.peer.type,
          peerIdentityId: peer.identity?.id ?? null,
          peerOrganizationId: peer.organizationId,
          skills,
          note: dto.note ?? '',
        },
        names,
      );
    });
  }

  /**
   * An approval decided `always` (docs/api.md §16), in the decision's transaction: the
   * owner's rule naming the peer identity in that direction takes `action` — the rule
   * there is, or a new one — reported and audited as any change to a rule. It names the
   * skills of the `ask` rule that asked about a call naming `skill`, when that rule named
   * skills (else none), so that it outranks that rule: the person's answer sticks.
   */
  async remember(
    tx: Tx,
    owner: RuleIdentity,
    peer: RuleIdentity,
    direction: 'inbound' | 'outbound',
    action: 'allow' | 'block',
    skill: string | null,
  ): Promise<ContactRuleView> {
    const names = namesOf([owner, peer]);
    await this.repository.lockRulesOf(owner.id, tx);
    const skills = await this.askingSkills(tx, owner, peer, direction, skill);
    const existing = await this.repository.identityRule(owner.id, peer.id, direction, skills, tx);
    if (!existing) {
      return this.insert(
        tx,
        {
          identityId: owner.id,
          organizationId: owner.organizationId,
          direction,
          action,
          peerType: 'identity',
          peerIdentityId: peer.id,
          peerOrganizationId: null,
          skills,
          note: '',
        },
        names,
      );
    }
    const updated = await this.repository.updateRule(
      owner.organizationId,
      existing.id,
      { direction: null, action, skills: null, note: null },
      tx,
    );
    return this.updated(tx, existing, updated!, names);
  }

  /**
   * The skills of the owner's effective rule about the peer for a call naming `skill`,
   * when that rule asks; else none. Read in the decision's transaction: the rules are
   * all it needs (a rule names its parties by identity and organization, which the
   * caller gave).
   */
  private async askingSkills(
    tx: Tx,
    owner: RuleIdentity,
    peer: RuleIdentity,
    direction: 'inbound' | 'outbound',
    skill: string | null,
  ): Promise<string[]> {
    if (skill === null) {
      return [];
    }
    const side = direction === 'inbound' ? 'worker' : 'requester';
    const [requester, worker] = side === 'worker' ? [peer, owner] : [owner, peer];
    const rule = effectiveRule(await this.repository.rulesBetween(requester, worker, tx), side, owner, peer, skill);
    return rule?.action === 'ask' ? [...rule.skills] : [];
  }

  /** A new rule within the per-identity limit (the caller holds the owner's lock), reported and audited. */
  private async insert(tx: Tx, rule: NewContactRule, names: IdentityNames): Promise<ContactRuleView> {
    const count = await this.repository.countRules(rule.identityId, tx);
    if (count >= MAX_RULES_PER_IDENTITY) {
      throw conflict(
        'rule_limit_reached',
        `An identity can have at most ${MAX_RULES_PER_IDENTITY} contact rules; delete one first.`,
      );
    }
    const inserted = await this.repository.insertRule(rule, tx).catch(ruleConflict);
    const view = await this.emitted(tx, 'contact_rule.created', inserted, names);
    await this.audit.record(tx, {
      organizationId: inserted.organizationId,
      action: 'contact_rule.created',
      target: ruleTarget(view),
      after: view,
    });
    return view;
  }

  /** A rule as an update left it, reported and audited when a value changed. */
  private async updated(
    tx: Tx,
    previous: ContactRule,
    { changed, rule }: { rule: ContactRule; changed: boolean },
    names: IdentityNames,
  ): Promise<ContactRuleView> {
    if (!changed) {
      return toContactRuleView(rule, names);
    }
    const view = await this.emitted(tx, 'contact_rule.updated', rule, names);
    await this.audit.record(tx, {
      organizationId: rule.organizationId,
      action: 'contact_rule.updated',
      target: ruleTarget(view),
      before: toContactRuleView(previous, names),
      after: view,
    });
    return view;
  }

  /**
   * Action, direction, skills and note; a change that would duplicate another rule is
   * a 409. Skills are checked against the card of the direction the rule ends up with.
   * `updated_at` moves only when a value actually changes.
   */
  async update(principal: OrganizationPrincipal, id: string, dto: UpdateContactRuleDto): Promise<ContactRuleView> {
    const { names, parties, rule: previous } = await this.ruleWithNames(principal, id);
    const skills = dto.skills === undefined ? null : ruleSkills(dto.skills);
    if (skills !== null || dto.direction !== undefined) {
      const party = (id: string | null) => parties.find((identity) => identity.id === id);
      requireCardSkills(
        skills ?? previous.skills,
        dto.direction ?? previous.direction,
        party(previous.identityId)!,
        party(previous.peerIdentityId),
      );
    }
    return this.db.transaction(async (tx) => {
      const updated = await this.repository
        .updateRule(
          principal.organizationId,
          id,
          { direction: dto.direction ?? null, action: dto.action ?? null, skills, note: dto.note ?? null },
          tx,
        )
        .catch(ruleConflict);
      if (!updated) {
        throw ruleNotFound();
      }
      return this.updated(tx, previous, updated, names);
    });
  }

  async remove(principal: OrganizationPrincipal, id: string): Promise<void> {
    const { names } = await this.ruleWithNames(principal, id);
    await this.db.transaction(async (tx) => {
      const deleted = await this.repository.deleteRule(principal.organizationId, id, tx);
      if (!deleted) {
        throw ruleNotFound();
      }
      const view = await this.emitted(tx, 'contact_rule.deleted', deleted, names);
      await this.audit.record(tx, {
        organizationId: deleted.organizationId,
        action: 'contact_rule.deleted',
        target: ruleTarget(view),
        before: view,
      });
    });
  }

  /** The rule as every read shows it, reported to its owner's organization in the change's transaction. */
  private async emitted(
    tx: Tx,
    type: 'contact_rule.created' | 'contact_rule.updated' | 'contact_rule.deleted',
    rule: ContactRule,
    names: IdentityNames,
  ): Promise<ContactRuleView> {
    const view = toContactRuleView(rule, names);
    await this.events.emit(tx, {
      type,
      organizationId: rule.organizationId,
      identityIds: [rule.identityId],
      data: { rule: view },
    });
    return view;
  }

  /**
   * The identities a rule of the organization names and their handles (its owner and
   * peer never change), read before the change's transaction opens; 404 when there is
   * no such rule.
   */
  private async ruleWithNames(
    principal: OrganizationPrincipal,
    id: string,
  ): Promise<{ rule: ContactRule; parties: Identity[]; names: IdentityNames }> {
    const rule = await this.repository.rule(id);
    requireAccess(
      principal,
      'rule.write',
      rule ? { owner: { organizationId: rule.organizationId, identityId: rule.identityId } } : null,
    );
    const { identityId, peerIdentityId } = rule!;
    const parties = await this.identities.findByIds(peerIdentityId ? [identityId, peerIdentityId] : [identityId]);
    return { rule: rule!, parties, names: namesOf(parties) };
  }

  /** Shows rules with the handles they name, looked up in one query. */
  private async present(rules: ContactRule[]): Promise<ContactRuleView[]> {
    const ids = rules.flatMap((rule) =>
      rule.peerIdentityId ? [rule.identityId, rule.peerIdentityId] : [rule.identityId],
    );
    const names = namesOf(await this.identities.findByIds(ids));
    return rules.map((rule) => toContactRuleView(rule, names));
  }

  /** The owner id a list is limited to: undefined for the whole organization, null for nothing. */
  private async ownerFilter(principal: Principal, handle: string | undefined): Promise<string | undefined | null> {
    if (handle === undefined) {
      return principal.kind === 'agent' ? principal.identity.id : undefined;
    }
    const owner = await this.identities.findByHandle(handle);
    return canAccess(principal, 'rule.read', identityParty(owner)) ? owner!.id : null;
  }

  /**
   * A peer identity must exist and not be deleted; it may belong to any organization
   * (or none yet). A peer organization's existence is left to the foreign key.
   */
  private async resolvePeer(
    owner: Identity,
    peer: RulePeerDto,
  ): Promise<{ identity?: Identity; organizationId: string | null }> {
    const stray = peer.type === 'identity' ? 'organization_id' : 'handle';
    if (peer[stray] !== undefined) {
      throw badRequest('validation_failed', `A peer of type ${peer.type} does not take ${stray}.`, [
        { field: `peer.${stray}`, message: `peer.${stray} must be omitted when peer.type is ${peer.type}` },
      ]);
    }
    if (peer.type === 'organization') {
      return { organizationId: peer.organization_id! };
    }
    const identity = await this.identities.findByHandle(peer.handle!);
    if (!identity || identity.status !== 'active') {
      throw notFound('peer_not_found', `No identity with handle '${peer.handle}'.`);
    }
    if (identity.id === owner.id) {
      throw badRequest('invalid_peer', 'A contact rule cannot name its own identity as the peer.');
    }
    return { identity, organizationId: null };
  }
}

const ruleNotFound = () => notVisible('rule.write');

/** A rule's skills as stored (docs/api.md §16): without repeats, sorted, so rules that name the same skills are one. */
function ruleSkills(skills: readonly string[]): string[] {
  return [...new Set(skills)].sort();
}

/**
 * A rule names skills of the card whose skills it is about (docs/api.md §16): the
 * owner's for an inbound or both rule (the calls the owner takes), the peer identity's
 * for an outbound one (the calls it makes) — that card as any caller sees it, its
 * `admitted` skills too only when the peer is of the owner's organization. An outbound
 * rule naming an organization names skills of its agents: no one card to check.
 */
function requireCardSkills(
  skills: readonly string[],
  direction: RuleDirection,
  owner: Identity,
  peer: Identity | undefined,
): void {
  const card = direction === 'outbound' ? peer : owner;
  if (skills.length === 0 || !card) {
    return;
  }
  const known = cardSkillIds(card, card.organizationId === owner.organizationId ? 'admitted' : 'public');
  const unknown = skills.filter((skill) => !known.has(skill));
  if (unknown.length > 0) {
    const names = unknown.map((skill) => `'${skill}'`).join(', ');
    throw badRequest('validation_failed', `A contact rule names skills of ${card.agentHandle}'s card.`, [
      { field: 'skills', message: `skills names ${names}, not a skill of ${card.agentHandle}'s card` },
    ]);
  }
}

/** The constraint violations a rule write can meet, as the client errors they are. */
function ruleConflict(error: unknown): never {
  const code = (error as { driverError?: { code?: string } }).driverError?.code;
  if (code === UNIQUE_VIOLATION) {
    throw conflict('contact_rule_exists', 'The identity already has a rule for that peer in that direction.');
  }
  if (code === FOREIGN_KEY_VIOLATION) {
    throw notFound('peer_not_found', 'No organization with that id.');
  }
  throw error;
}

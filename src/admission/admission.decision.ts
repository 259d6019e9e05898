import type { FilterMode, IdentityStatus } from '../identities/identity.entity';

/**
 * The admission decision (docs/api.md §6) as a
 * pure function of the two participants and the rules they own about each other.
 * No I/O here: AdmissionService fetches the rules, this file decides.
 */

export type RuleDirection = 'inbound' | 'outbound' | 'both';
/** `ask`: a new task of the pair waits for a person of the owner's organization to approve it (docs/api.md §16). */
export type RuleAction = 'allow' | 'block' | 'ask';
export type PeerType = 'identity' | 'organization';
export type Side = 'requester' | 'worker';

export const RULE_DIRECTIONS: readonly RuleDirection[] = ['inbound', 'outbound', 'both'];
export const RULE_ACTIONS: readonly RuleAction[] = ['allow', 'block', 'ask'];
export const PEER_TYPES: readonly PeerType[] = ['identity', 'organization'];

/** docs/api.md §6 reasons, in the order the decision reaches them. */
export type AdmissionReason =
  | 'requester_unclaimed'
  | 'requester_disabled'
  | 'worker_unavailable'
  | 'blocked_by_requester'
  | 'blocked_by_worker'
  | 'same_organization'
  | 'public_egress'
  | 'mutual_permit'
  | 'not_permitted_by_requester'
  | 'not_permitted_by_worker'
  | 'approval_required_by_requester'
  | 'approval_required_by_worker';

/** What an administrator is told: a decision the other organization's side made is theirs to explain. */
export type ReportedReason = AdmissionReason | 'denied_by_peer';

/** The identity fields the decision reads (the Identity entity has them all). */
export interface AdmissionParty {
  readonly id: string;
  readonly organizationId: string | null;
  readonly claimed: boolean;
  readonly enabled: boolean;
  readonly status: IdentityStatus;
  readonly publiclyDiscoverable: boolean;
  readonly allowPublicEgress: boolean;
  readonly filterMode: FilterMode;
}

/** What a rule names a party by: its identity and its organization (effectiveRule reads no more). */
export type RuleParty = Pick<AdmissionParty, 'id' | 'organizationId'>;

/** The contact rule fields the decision reads. */
export interface RuleFacts {
  readonly id: string;
  /** The owner. */
  readonly identityId: string;
  readonly direction: RuleDirection;
  readonly action: RuleAction;
  readonly peerType: PeerType;
  readonly peerIdentityId: string | null;
  readonly peerOrganizationId: string | null;
  /**
   * The skills the rule is about (docs/api.md §16), sorted; empty: every call of the
   * pair. A rule with skills applies only to a call that names one of them.
   */
  readonly skills: readonly string[];
}

export interface AdmissionDecision<R extends RuleFacts = RuleFacts> {
  /** The call may go on (for a call that starts a task, perhaps only to wait for `approval`). */
  allowed: boolean;
  /** The skill of the call decided about (docs/api.md §16); null for a call that names none. */
  skill: string | null;
  reason: AdmissionReason;
  /** The side whose state or rules denied the call; null when allowed. */
  decidedBy: Side | null;
  /** The block rule that denied the call, if a rule did. */
  rule: R | null;
  /** Each side's effective rule as consulted; both null when a participant's state decided first. */
  effective: { requester: R | null; worker: R | null };
  /**
   * The sides whose organization must approve a new task of the pair before it reaches
   * the worker (docs/api.md §16); empty when nobody asks, and always when denied.
   */
  approval: readonly Side[];
}

/** Which of two equally specific rules wins: the higher. */
const STRENGTH: Record<RuleAction, number> = { block: 2, allow: 1, ask: 0 };

/** The direction a side's own rules must cover: the requester sends out, the worker takes in. */
const DIRECTION_OF: Record<Side, RuleDirection> = { requester: 'outbound', worker: 'inbound' };

/**
 * The owner's effective rule about the peer for one side (docs/api.md §6 step 1), for a
 * call that names `skill` (null: none): a rule with skills applies only to a call
 * naming one of them, and then outranks every rule without skills (docs/api.md §16).
 * Among rules alike in that, the side's own direction before `both`; within a
 * direction, a rule naming the peer identity before one naming the peer's
 * organization. Rules about anyone else are ignored, so a caller may pass more than it
 * needs.
 */
export function effectiveRule<R extends RuleFacts>(
  rules: readonly R[],
  side: Side,
  owner: RuleParty,
  peer: RuleParty,
  skill: string | null = null,
): R | null {
  // Rank 0–3 among rules with the call's skill, 4–7 among rules without skills: own
  // direction naming the identity, own direction naming the organization, `both` naming
  // the identity, `both` naming the organization. Lowest rank wins.
  let best: R | null = null;
  let bestRank = Infinity;
  for (const rule of rules) {
    if (rule.identityId !== owner.id) {
      continue;
    }
    const skillRank = rule.skills.length === 0 ? 4 : skill !== null && rule.skills.includes(skill) ? 0 : null;
    const directionRank = rule.direction === DIRECTION_OF[side] ? 0 : rule.direction === 'both' ? 2 : null;
    const peerRank =
      rule.peerType === 'identity'
        ? rule.peerIdentityId === peer.id
          ? 0
          : null
        : peer.organizationId !== null && rule.peerOrganizationId === peer.organizationId
          ? 1
          : null;
    if (skillRank === null || directionRank === null || peerRank === null) {
      continue;
    }
    // Equally specific rules (docs/api.md §16): block beats allow, allow beats ask.
    const rank = skillRank + directionRank + peerRank;
    if (rank > bestRank || (rank === bestRank && STRENGTH[rule.action] <= STRENGTH[best!.action])) {
      continue;
    }
    best = rule;
    bestRank = rank;
  }
  return best;
}

/**
 * Denials that come from a participant's state rather than from rules: only claimed,
 * enabled, live identities exchange work. Checked first, so no rules need fetching.
 */
export function standingDenial(
  requester: AdmissionParty,
  worker: AdmissionParty,
  skill: string | null = null,
): AdmissionDecision<never> | null {
  const deny = (reason: AdmissionReason, decidedBy: Side): AdmissionDecision<never> => ({
    allowed: false,
    skill,
    reason,
    decidedBy,
    rule: null,
    effective: { requester: null, worker: null },
    approval: [],
  });
  if (!requester.claimed) {
    return deny('requester_unclaimed', 'requester');
  }
  if (!requester.enabled || requester.status !== 'active') {
    return deny('requester_disabled', 'requester');
  }
  if (!worker.claimed || !worker.enabled || worker.status !== 'active') {
    return deny('worker_unavailable', 'worker');
  }
  return null;
}

/**
 * May `requester` send work to `worker` in a call that names `skill` (null: none)?
 * docs/api.md §6, steps 1–5, after the participants' state, with §16's approvals and
 * per-skill rules: a side asks for approval when its effective rule is `ask`, or —
 * across organizations — when it has no rule and its filter mode is `approval`. Blocks
 * beat everything; an `allow` rule beats `ask` (`effectiveRule` ranks them, a rule
 * with the call's skill first); an `ask` rule is honoured within an organization and
 * under public egress too, since a person wrote it about this very peer.
 */
export function decide<R extends RuleFacts>(
  requester: AdmissionParty,
  worker: AdmissionParty,
  rules: readonly R[],
  skill: string | null = null,
): AdmissionDecision<R> {
  const standing = standingDenial(requester, worker, skill);
  if (standing) {
    return standing;
  }

  const effective = {
    requester: effectiveRule(rules, 'requester', requester, worker, skill),
    worker: effectiveRule(rules, 'worker', worker, requester, skill),
  };
  const deny = (reason: AdmissionReason, decidedBy: Side, rule: R | null = null): AdmissionDecision<R> => ({
    allowed: false,
    skill,
    reason,
    decidedBy,
    rule,
    effective,
    approval: [],
  });
  // Admitted, unless a side asks: then admitted to wait for that side's approval.
  const admit = (reason: AdmissionReason, asking: readonly Side[]): AdmissionDecision<R> => ({
    allowed: true,
    skill,
    reason: asking.length === 0 ? reason : APPROVAL_REASON[asking[0]!],
    decidedBy: null,
    rule: null,
    effective,
    approval: asking,
  });

  // 2. An explicit block from either side overrides every permission below.
  if (effective.requester?.action === 'block') {
    return deny('blocked_by_requester', 'requester', effective.requester);
  }
  if (effective.worker?.action === 'block') {
    return deny('blocked_by_worker', 'worker', effective.worker);
  }
  const asksByRule = SIDES.filter((side) => effective[side]?.action === 'ask');
  // 3. Same organization.
  if (requester.organizationId === worker.organizationId) {
    return admit('same_organization', asksByRule);
  }
  // 4. Public egress to a publicly discoverable worker.
  if (worker.publiclyDiscoverable && requester.allowPublicEgress) {
    return admit('public_egress', asksByRule);
  }
  // 5. Both sides permit: an allow rule, or a blacklist filter mode (nothing here blocks);
  // a side asks with an `ask` rule, or with no rule in the `approval` filter mode.
  const parties = { requester, worker };
  const stance = (side: Side) => sideStance(effective[side], parties[side]);
  if (stance('requester') === 'refuses') {
    return deny('not_permitted_by_requester', 'requester');
  }
  if (stance('worker') === 'refuses') {
    return deny('not_permitted_by_worker', 'worker');
  }
  return admit(
    'mutual_permit',
    SIDES.filter((side) => stance(side) === 'asks'),
  );
}

/**
 * The decision for a call that names no skill of its own — a read, a cancel, a
 * subscription, the extended card (docs/api.md §16): the pair is admitted when a call
 * naming no skill, or one naming a skill its rules name, would be. Only a rule with
 * skills can make a call naming a skill differ from one naming none, so those skills
 * are all there is to try. The denial, when every one is denied, is the no-skill call's.
 */
export function decidePair<R extends RuleFacts>(
  requester: AdmissionParty,
  worker: AdmissionParty,
  rules: readonly R[],
): AdmissionDecision<R> {
  const unnamed = decide(requester, worker, rules);
  if (unnamed.allowed || standingDenial(requester, worker)) {
    return unnamed;
  }
  for (const skill of new Set(rules.flatMap((rule) => rule.skills))) {
    const named = decide(requester, worker, rules, skill);
    if (named.allowed) {
      return named;
    }
  }
  return unnamed;
}

/** What one side says to a call of another organization's identity: its effective rule, else its filter mode. */
export type SideStance = 'blocks' | 'permits' | 'asks' | 'refuses';

/**
 * One side's stance (docs/api.md §6 steps 2 and 5): a block rule blocks; an allow rule,
 * or no rule in the blacklist filter mode, permits; an ask rule, or no rule in the
 * approval filter mode, asks; anything else (no rule in the whitelist mode) refuses.
 */
export function sideStance(
  rule: Pick<RuleFacts, 'action'> | null,
  party: Pick<AdmissionParty, 'filterMode'>,
): SideStance {
  const action = rule?.action;
  if (action === 'block') {
    return 'blocks';
  }
  if (action === 'allow' || (action === undefined && party.filterMode === 'blacklist')) {
    return 'permits';
  }
  return action === 'ask' || (action === undefined && party.filterMode === 'approval') ? 'asks' : 'refuses';
}

const SIDES: readonly Side[] = ['requester', 'worker'];
const APPROVAL_REASON: Record<Side, AdmissionReason> = {
  requester: 'approval_required_by_requester',
  worker: 'approval_required_by_worker',
};

/**
 * The reason as the administrators of `viewerOrganizationId` see it: a denial that
 * another organization's side made is reported as `denied_by_peer`, nothing more. An
 * unclaimed identity belongs to no organization, so its state hides nobody's rules.
 */
export function reportedReason(
  decision: Pick<AdmissionDecision, 'reason' | 'decidedBy'>,
  organizations: Record<Side, string | null>,
  viewerOrganizationId: string,
): ReportedReason {
  if (decision.decidedBy === null) {
    return decision.reason;
  }
  const decider = organizations[decision.decidedBy];
  return decider === null || decider === viewerOrganizationId ? decision.reason : 'denied_by_peer';
}

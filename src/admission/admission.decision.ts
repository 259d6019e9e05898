import type { FilterMode, IdentityStatus } from '../identities/identity.entity';

/**
 * The admission decision (docs/api.md §6) as a
 * pure function of the two participants and the rules they own about each other.
 * No I/O here: AdmissionService fetches the rules, this file decides.
 */

export type RuleDirection = 'inbound' | 'outbound' | 'both';
export type RuleAction = 'allow' | 'block';
export type PeerType = 'identity' | 'organization';
export type Side = 'requester' | 'worker';

export const RULE_DIRECTIONS: readonly RuleDirection[] = ['inbound', 'outbound', 'both'];
export const RULE_ACTIONS: readonly RuleAction[] = ['allow', 'block'];
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
  | 'not_permitted_by_worker';

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
}

export interface AdmissionDecision<R extends RuleFacts = RuleFacts> {
  allowed: boolean;
  reason: AdmissionReason;
  /** The side whose state or rules denied the call; null when allowed. */
  decidedBy: Side | null;
  /** The block rule that denied the call, if a rule did. */
  rule: R | null;
  /** Each side's effective rule as consulted; both null when a participant's state decided first. */
  effective: { requester: R | null; worker: R | null };
}

/** The direction a side's own rules must cover: the requester sends out, the worker takes in. */
const DIRECTION_OF: Record<Side, RuleDirection> = { requester: 'outbound', worker: 'inbound' };

/**
 * The owner's effective rule about the peer for one side (docs/api.md §6 step 1): the
 * side's own direction before `both`; within a direction, a rule naming the peer
 * identity before one naming the peer's organization. Rules about anyone else are
 * ignored, so a caller may pass more than it needs.
 */
export function effectiveRule<R extends RuleFacts>(
  rules: readonly R[],
  side: Side,
  owner: AdmissionParty,
  peer: AdmissionParty,
): R | null {
  // Rank 0–3: own direction naming the identity, own direction naming the organization,
  // `both` naming the identity, `both` naming the organization. Lowest rank wins.
  let best: R | null = null;
  let bestRank = Infinity;
  for (const rule of rules) {
    if (rule.identityId !== owner.id) {
      continue;
    }
    const directionRank = rule.direction === DIRECTION_OF[side] ? 0 : rule.direction === 'both' ? 2 : null;
    const peerRank =
      rule.peerType === 'identity'
        ? rule.peerIdentityId === peer.id
          ? 0
          : null
        : peer.organizationId !== null && rule.peerOrganizationId === peer.organizationId
          ? 1
          : null;
    if (directionRank === null || peerRank === null || directionRank + peerRank >= bestRank) {
      continue;
    }
    best = rule;
    bestRank = directionRank + peerRank;
  }
  return best;
}

/**
 * Denials that come from a participant's state rather than from rules: only claimed,
 * enabled, live identities exchange work. Checked first, so no rules need fetching.
 */
export function standingDenial(requester: AdmissionParty, worker: AdmissionParty): AdmissionDecision<never> | null {
  const deny = (reason: AdmissionReason, decidedBy: Side): AdmissionDecision<never> => ({
    allowed: false,
    reason,
    decidedBy,
    rule: null,
    effective: { requester: null, worker: null },
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

/** May `requester` send work to `worker`? docs/api.md §6, steps 1–5, after the participants' state. */
export function decide<R extends RuleFacts>(
  requester: AdmissionParty,
  worker: AdmissionParty,
  rules: readonly R[],
): AdmissionDecision<R> {
  const standing = standingDenial(requester, worker);
  if (standing) {
    return standing;
  }

  const effective = {
    requester: effectiveRule(rules, 'requester', requester, worker),
    worker: effectiveRule(rules, 'worker', worker, requester),
  };
  const allow = (reason: AdmissionReason): AdmissionDecision<R> => ({
    allowed: true,
    reason,
    decidedBy: null,
    rule: null,
    effective,
  });
  const deny = (reason: AdmissionReason, decidedBy: Side, rule: R | null = null): AdmissionDecision<R> => ({
    allowed: false,
    reason,
    decidedBy,
    rule,
    effective,
  });

  // 2. An explicit block from either side overrides every permission below.
  if (effective.requester?.action === 'block') {
    return deny('blocked_by_requester', 'requester', effective.requester);
  }
  if (effective.worker?.action === 'block') {
    return deny('blocked_by_worker', 'worker', effective.worker);
  }
  // 3. Same organization.
  if (requester.organizationId === worker.organizationId) {
    return allow('same_organization');
  }
  // 4. Public egress to a publicly discoverable worker.
  if (worker.publiclyDiscoverable && requester.allowPublicEgress) {
    return allow('public_egress');
  }
  // 5. Both sides permit: an allow rule, or a blacklist filter mode (nothing here blocks).
  const permits = (side: Side, party: AdmissionParty) =>
    effective[side]?.action === 'allow' || party.filterMode === 'blacklist';
  if (!permits('requester', requester)) {
    return deny('not_permitted_by_requester', 'requester');
  }
  if (!permits('worker', worker)) {
    return deny('not_permitted_by_worker', 'worker');
  }
  return allow('mutual_permit');
}

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

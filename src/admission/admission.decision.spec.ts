import {
  decide,
  effectiveRule,
  sideStance,
  type AdmissionParty,
  type AdmissionReason,
  type PeerType,
  type RuleAction,
  type RuleDirection,
  type RuleFacts,
  type Side,
} from './admission.decision';

/*
 * The decision is checked against an independent model written from docs/api.md §6, not
 * derived from the code: rules are placed in "slots" (direction × peer level), a side's
 * effective action is the first filled slot in the order the contract states, and the
 * outcome comes from hand-written truth tables. Every combination is generated.
 */

/** §6 before approvals: the exhaustive model below covers allow and block; §16's `ask` has a model of its own. */
type Slot = 'none' | 'allow' | 'block';
type Mode = 'whitelist' | 'blacklist';

/** A side's four slots, in precedence order (docs/api.md §6 step 1): own direction before `both`; identity before organization. */
const REQUESTER_SLOTS: ReadonlyArray<[RuleDirection, PeerType]> = [
  ['outbound', 'identity'],
  ['outbound', 'organization'],
  ['both', 'identity'],
  ['both', 'organization'],
];
const WORKER_SLOTS: ReadonlyArray<[RuleDirection, PeerType]> = [
  ['inbound', 'identity'],
  ['inbound', 'organization'],
  ['both', 'identity'],
  ['both', 'organization'],
];
const SLOT_VALUES: readonly Slot[] = ['none', 'allow', 'block'];
const MODES: readonly Mode[] = ['whitelist', 'blacklist'];
const BOOLEANS = [false, true] as const;

/** Model of the effective rule: the first filled slot, and its index. */
function firstFilled(slots: readonly Slot[]): { action: Slot; index: number } {
  const index = slots.findIndex((s) => s !== 'none');
  return index < 0 ? { action: 'none', index: -1 } : { action: slots[index], index };
}

const BR: AdmissionReason = 'blocked_by_requester';
const BW: AdmissionReason = 'blocked_by_worker';
const NPR: AdmissionReason = 'not_permitted_by_requester';
const NPW: AdmissionReason = 'not_permitted_by_worker';
const OK: AdmissionReason = 'mutual_permit';

/**
 * Truth table for a private cross-organization call (no public egress): effective
 * requester action × effective worker action → the reason for each pair of filter
 * modes, columns (requester mode / worker mode):
 * whitelist/whitelist, whitelist/blacklist, blacklist/whitelist, blacklist/blacklist.
 * When neither side permits, the requester's side is reported.
 */
const PRIVATE_CROSS_ORGANIZATION: Record<
  `${Slot}/${Slot}`,
  [AdmissionReason, AdmissionReason, AdmissionReason, AdmissionReason]
> = {
  'none/none': [NPR, NPR, NPW, OK],
  'none/allow': [NPR, NPR, OK, OK],
  'none/block': [BW, BW, BW, BW],
  'allow/none': [NPW, OK, NPW, OK],
  'allow/allow': [OK, OK, OK, OK],
  'allow/block': [BW, BW, BW, BW],
  'block/none': [BR, BR, BR, BR],
  'block/allow': [BR, BR, BR, BR],
  'block/block': [BR, BR, BR, BR],
};

/**
 * Same organization, or a publicly discoverable worker with a requester allowed public
 * egress: a block from either side (requester's first) still denies; otherwise allowed
 * whatever the filter modes.
 */
const PERMITTED_WITHOUT_RULES: Record<`${Slot}/${Slot}`, 'permission' | AdmissionReason> = {
  'none/none': 'permission',
  'none/allow': 'permission',
  'none/block': BW,
  'allow/none': 'permission',
  'allow/allow': 'permission',
  'allow/block': BW,
  'block/none': BR,
  'block/allow': BR,
  'block/block': BR,
};

interface Scenario {
  sameOrganization: boolean;
  publiclyDiscoverable: boolean;
  allowPublicEgress: boolean;
  requesterMode: Mode;
  workerMode: Mode;
  requesterSlots: Slot[];
  workerSlots: Slot[];
}

interface Expected {
  reason: AdmissionReason;
  allowed: boolean;
  decidedBy: Side | null;
  ruleId: string | null;
  effective: { requester: string | null; worker: string | null };
}

const slotId = (side: Side, index: number) => `${side}-slot-${index}`;

function model(s: Scenario): Expected {
  const r = firstFilled(s.requesterSlots);
  const w = firstFilled(s.workerSlots);
  const key = `${r.action}/${w.action}` as const;
  let reason: AdmissionReason;
  if (s.sameOrganization || (s.publiclyDiscoverable && s.allowPublicEgress)) {
    const outcome = PERMITTED_WITHOUT_RULES[key];
    reason = outcome !== 'permission' ? outcome : s.sameOrganization ? 'same_organization' : 'public_egress';
  } else {
    const column = (s.requesterMode === 'blacklist' ? 2 : 0) + (s.workerMode === 'blacklist' ? 1 : 0);
    reason = PRIVATE_CROSS_ORGANIZATION[key][column];
  }
  const deciding: Record<string, Side | null> = {
    blocked_by_requester: 'requester',
    not_permitted_by_requester: 'requester',
    blocked_by_worker: 'worker',
    not_permitted_by_worker: 'worker',
  };
  const decidedBy = deciding[reason] ?? null;
  return {
    reason,
    allowed: decidedBy === null,
    decidedBy,
    ruleId: reason === BR ? slotId('requester', r.index) : reason === BW ? slotId('worker', w.index) : null,
    effective: {
      requester: r.index < 0 ? null : slotId('requester', r.index),
      worker: w.index < 0 ? null : slotId('worker', w.index),
    },
  };
}

// --- building the inputs ----------------------------------------------------------

function party(id: string, organizationId: string | null, extra: Partial<AdmissionParty> = {}): AdmissionParty {
  return {
    id,
    organizationId,
    claimed: organizationId !== null,
    enabled: organizationId !== null,
    status: 'active',
    publiclyDiscoverable: false,
    allowPublicEgress: false,
    filterMode: 'whitelist',
    ...extra,
  };
}

function rule(
  id: string,
  owner: string,
  direction: RuleDirection,
  action: RuleAction,
  peer: { identity?: string; organization?: string },
): RuleFacts {
  return {
    id,
    identityId: owner,
    direction,
    action,
    peerType: peer.identity ? 'identity' : 'organization',
    peerIdentityId: peer.identity ?? null,
    peerOrganizationId: peer.organization ?? null,
    skills: [],
  };
}

function slotRules(side: Side, owner: AdmissionParty, peer: AdmissionParty, slots: readonly Slot[]): RuleFacts[] {
  const layout = side === 'requester' ? REQUESTER_SLOTS : WORKER_SLOTS;
  return slots.flatMap((value, i) => {
    if (value === 'none') {
      return [];
    }
    const [direction, level] = layout[i];
    return [
      rule(
        slotId(side, i),
        owner.id,
        direction,
        value,
        level === 'identity' ? { identity: peer.id } : { organization: peer.organizationId! },
      ),
    ];
  });
}

/**
 * Rules that must never count: each side's rules for the opposite direction, rules
 * about third parties, and a third identity's rules about both participants. All
 * blocks, so counting any of them would change the outcome.
 */
function distractors(requester: AdmissionParty, worker: AdmissionParty): RuleFacts[] {
  return [
    rule('d1', requester.id, 'inbound', 'block', { identity: worker.id }),
    rule('d2', requester.id, 'inbound', 'block', { organization: worker.organizationId! }),
    rule('d3', requester.id, 'outbound', 'block', { identity: 'third' }),
    rule('d4', requester.id, 'both', 'block', { organization: 'org-third' }),
    rule('d5', worker.id, 'outbound', 'block', { identity: requester.id }),
    rule('d6', worker.id, 'outbound', 'block', { organization: requester.organizationId! }),
    rule('d7', worker.id, 'inbound', 'block', { identity: 'third' }),
    rule('d8', worker.id, 'both', 'block', { organization: 'org-third' }),
    rule('d9', 'third', 'both', 'block', { identity: worker.id }),
    rule('d10', 'third', 'both', 'block', { identity: requester.id }),
  ];
}

function* product<T>(...lists: ReadonlyArray<readonly T[]>): Generator<T[]> {
  if (lists.length === 0) {
    yield [];
    return;
  }
  const [first, ...rest] = lists;
  for (const value of first) {
    for (const tail of product(...rest)) {
      yield [value, ...tail];
    }
  }
}

const ALL_SLOT_FILLINGS = [...product(SLOT_VALUES, SLOT_VALUES, SLOT_VALUES, SLOT_VALUES)];

function* scenarios(): Generator<Scenario> {
  for (const [sameOrganization, publiclyDiscoverable, allowPublicEgress] of product<boolean>(
    BOOLEANS,
    BOOLEANS,
    BOOLEANS,
  )) {
    for (const [requesterMode, workerMode] of product(MODES, MODES)) {
      for (const requesterSlots of ALL_SLOT_FILLINGS) {
        for (const workerSlots of ALL_SLOT_FILLINGS) {
          yield {
            sameOrganization,
            publiclyDiscoverable,
            allowPublicEgress,
            requesterMode,
            workerMode,
            requesterSlots,
            workerSlots,
          };
        }
      }
    }
  }
}

function inputs(s: Scenario) {
  const requester = party('requester', 'org-r', {
    allowPublicEgress: s.allowPublicEgress,
    filterMode: s.requesterMode,
  });
  const worker = party('worker', s.sameOrganization ? 'org-r' : 'org-w', {
    publiclyDiscoverable: s.publiclyDiscoverable,
    filterMode: s.workerMode,
  });
  const rules = [
    ...slotRules('requester', requester, worker, s.requesterSlots),
    ...slotRules('worker', worker, requester, s.workerSlots),
  ];
  return { requester, worker, rules };
}

describe('admission decision (docs/api.md §6)', () => {
  // 2 × 2 × 2 (organization, public, egress) × 4 (filter modes) × 81 × 81 (slots per side).
  const EXPECTED_SCENARIOS = 8 * 4 * 81 * 81;

  it.each([
    ['in slot order, nothing else', false],
    ['in reverse order, among rules that must not count', true],
  ])(
    'matches the model for every combination of organization, public egress, filter modes and rules (%s)',
    (_, noisy) => {
      const mismatches: string[] = [];
      let count = 0;
      for (const s of scenarios()) {
        count++;
        const { requester, worker, rules } = inputs(s);
        const given = noisy ? [...distractors(requester, worker), ...rules].reverse() : rules;
        const d = decide(requester, worker, given);
        const actual: Expected = {
          reason: d.reason,
          allowed: d.allowed,
          decidedBy: d.decidedBy,
          ruleId: d.rule?.id ?? null,
          effective: { requester: d.effective.requester?.id ?? null, worker: d.effective.worker?.id ?? null },
        };
        const expected = model(s);
        if (JSON.stringify(actual) !== JSON.stringify(expected) && mismatches.length < 10) {
          mismatches.push(
            `${JSON.stringify(s)}\n  expected ${JSON.stringify(expected)}\n  actual   ${JSON.stringify(actual)}`,
          );
        }
      }
      expect(mismatches).toEqual([]);
      expect(count).toBe(EXPECTED_SCENARIOS);
    },
  );

  describe("participants' state comes before any rule", () => {
    const states = {
      ok: (id: string, org: string) => party(id, org),
      unclaimed: (id: string) => party(id, null),
      disabled: (id: string, org: string) => party(id, org, { enabled: false }),
      deleted: (id: string, org: string) => party(id, org, { status: 'deleted' }),
    };
    type State = keyof typeof states;
    const STATE_NAMES = Object.keys(states) as State[];
    // requester state → worker state → reason (hand-written)
    const TABLE: Record<State, Record<State, AdmissionReason | null>> = {
      ok: { ok: null, unclaimed: 'worker_unavailable', disabled: 'worker_unavailable', deleted: 'worker_unavailable' },
      unclaimed: {
        ok: 'requester_unclaimed',
        unclaimed: 'requester_unclaimed',
        disabled: 'requester_unclaimed',
        deleted: 'requester_unclaimed',
      },
      disabled: {
        ok: 'requester_disabled',
        unclaimed: 'requester_disabled',
        disabled: 'requester_disabled',
        deleted: 'requester_disabled',
      },
      deleted: {
        ok: 'requester_disabled',
        unclaimed: 'requester_disabled',
        disabled: 'requester_disabled',
        deleted: 'requester_disabled',
      },
    };

    const cases = [
      ...product<string>(STATE_NAMES, STATE_NAMES, ['none', 'allow', 'block'], ['same', 'cross', 'public']),
    ];
    it.each(cases)('requester %s, worker %s, rules: %s, %s', (rState, wState, rules, relation) => {
      const workerOrg = relation === 'same' ? 'org-r' : 'org-w';
      const requester = {
        ...states[rState as State]('requester', 'org-r'),
        allowPublicEgress: true,
        filterMode: 'blacklist' as const,
      };
      const worker = {
        ...states[wState as State]('worker', workerOrg),
        publiclyDiscoverable: relation === 'public',
        filterMode: 'blacklist' as const,
      };
      const given =
        rules === 'none'
          ? []
          : [
              rule('r1', requester.id, 'both', rules as RuleAction, { identity: worker.id }),
              rule('w1', worker.id, 'both', rules as RuleAction, { identity: requester.id }),
            ];
      const expectedState = TABLE[rState as State][wState as State];
      const d = decide(requester, worker, given);
      if (expectedState === null) {
        expect(d.reason).not.toMatch(/unclaimed|disabled|unavailable/);
      } else {
        expect(d).toEqual({
          allowed: false,
          skill: null,
          reason: expectedState,
          decidedBy: expectedState.startsWith('requester') ? 'requester' : 'worker',
          rule: null,
          effective: { requester: null, worker: null },
          approval: [],
        });
      }
    });
  });

  describe('effective rule', () => {
    const requester = party('requester', 'org-r');
    const worker = party('worker', 'org-w');

    it('an outbound rule naming the organization beats a both rule naming the identity (direction first)', () => {
      const rules = [
        rule('both-identity', requester.id, 'both', 'block', { identity: worker.id }),
        rule('outbound-org', requester.id, 'outbound', 'allow', { organization: 'org-w' }),
      ];
      expect(effectiveRule(rules, 'requester', requester, worker)?.id).toBe('outbound-org');
    });

    it('an organization rule never applies to an unclaimed peer', () => {
      const unclaimed = party('loner', null);
      const rules = [rule('org', worker.id, 'inbound', 'block', { organization: 'org-r' })];
      expect(effectiveRule(rules, 'worker', worker, unclaimed)).toBeNull();
    });

    it('a rule naming another organization or identity does not apply', () => {
      const rules = [
        rule('a', requester.id, 'outbound', 'block', { organization: 'org-r' }),
        rule('b', requester.id, 'outbound', 'block', { identity: 'someone-else' }),
      ];
      expect(effectiveRule(rules, 'requester', requester, worker)).toBeNull();
    });
  });

  describe('named cases', () => {
    const acme = (id: string, extra: Partial<AdmissionParty> = {}) => party(id, 'acme', extra);
    const globex = (id: string, extra: Partial<AdmissionParty> = {}) => party(id, 'globex', extra);

    it('new identities of two organizations cannot talk without rules (whitelist default)', () => {
      expect(decide(acme('a'), globex('g'), []).reason).toBe('not_permitted_by_requester');
    });

    it('allow rules on both sides admit a private cross-organization call', () => {
      const rules = [
        rule('1', 'a', 'outbound', 'allow', { identity: 'g' }),
        rule('2', 'g', 'inbound', 'allow', { organization: 'acme' }),
      ];
      expect(decide(acme('a'), globex('g'), rules)).toMatchObject({ allowed: true, reason: 'mutual_permit' });
    });

    it("a worker's block of the whole organization overrides public egress", () => {
      const requester = acme('a', { allowPublicEgress: true });
      const worker = globex('g', { publiclyDiscoverable: true });
      expect(decide(requester, worker, []).reason).toBe('public_egress');
      const block = rule('b', 'g', 'both', 'block', { organization: 'acme' });
      expect(decide(requester, worker, [block])).toMatchObject({
        allowed: false,
        reason: 'blocked_by_worker',
        decidedBy: 'worker',
        rule: block,
      });
    });

    it('an identity-level allow beats an organization-level block of the same direction', () => {
      const rules = [
        rule('1', 'g', 'inbound', 'block', { organization: 'acme' }),
        rule('2', 'g', 'inbound', 'allow', { identity: 'a' }),
      ];
      expect(decide(acme('a', { filterMode: 'blacklist' }), globex('g'), rules).reason).toBe('mutual_permit');
    });

    it('a block inside the organization denies a same-organization call', () => {
      const block = rule('b', 'a2', 'inbound', 'block', { identity: 'a1' });
      expect(decide(acme('a1'), acme('a2'), [block]).reason).toBe('blocked_by_worker');
    });
  });

  describe('approvals (docs/api.md §16)', () => {
    type Action = 'none' | RuleAction;
    type ApprovalMode = 'whitelist' | 'blacklist' | 'approval';
    const ACTIONS: readonly Action[] = ['none', 'allow', 'block', 'ask'];
    const APPROVAL_MODES: readonly ApprovalMode[] = ['whitelist', 'blacklist', 'approval'];

    /** A side's stance across organizations (hand-written): its effective action × its filter mode. */
    const STANCE: Record<Action, Record<ApprovalMode, 'permits' | 'asks' | 'refuses' | 'blocks'>> = {
      none: { whitelist: 'refuses', blacklist: 'permits', approval: 'asks' },
      allow: { whitelist: 'permits', blacklist: 'permits', approval: 'permits' },
      ask: { whitelist: 'asks', blacklist: 'asks', approval: 'asks' },
      block: { whitelist: 'blocks', blacklist: 'blocks', approval: 'blocks' },
    };

    interface Outcome {
      allowed: boolean;
      reason: AdmissionReason;
      approval: Side[];
    }

    function expected(
      relation: 'same' | 'public' | 'cross',
      actions: Record<Side, Action>,
      modes: Record<Side, ApprovalMode>,
    ): Outcome {
      const sides: Side[] = ['requester', 'worker'];
      const denied = (reason: AdmissionReason): Outcome => ({ allowed: false, reason, approval: [] });
      const blocker = sides.find((side) => actions[side] === 'block');
      if (blocker) {
        return denied(blocker === 'requester' ? BR : BW);
      }
      // Within an organization or under public egress, only an `ask` rule asks.
      const stance = (side: Side) =>
        relation === 'cross' ? STANCE[actions[side]][modes[side]] : actions[side] === 'ask' ? 'asks' : 'permits';
      const refuser = sides.find((side) => stance(side) === 'refuses');
      if (refuser) {
        return denied(refuser === 'requester' ? NPR : NPW);
      }
      const asking = sides.filter((side) => stance(side) === 'asks');
      const base = { same: 'same_organization', public: 'public_egress', cross: OK }[relation] as AdmissionReason;
      const reason = asking.length === 0 ? base : (`approval_required_by_${asking[0]}` as AdmissionReason);
      return { allowed: true, reason, approval: asking };
    }

    const cases = [...product<string>(['same', 'public', 'cross'], ACTIONS, ACTIONS, APPROVAL_MODES, APPROVAL_MODES)];
    it('matches the model for every relation, action and filter mode of both sides', () => {
      const mismatches: string[] = [];
      for (const [relation, rAction, wAction, rMode, wMode] of cases) {
        const requester = party('requester', 'org-r', {
          allowPublicEgress: relation === 'public',
          filterMode: rMode as ApprovalMode,
        });
        const worker = party('worker', relation === 'same' ? 'org-r' : 'org-w', {
          publiclyDiscoverable: relation === 'public',
          filterMode: wMode as ApprovalMode,
        });
        const rules = [
          ...(rAction === 'none'
            ? []
            : [rule('r', 'requester', 'outbound', rAction as RuleAction, { identity: 'worker' })]),
          ...(wAction === 'none'
            ? []
            : [rule('w', 'worker', 'inbound', wAction as RuleAction, { identity: 'requester' })]),
        ];
        const d = decide(requester, worker, rules);
        const actual: Outcome = { allowed: d.allowed, reason: d.reason, approval: [...d.approval] };
        const want = expected(
          relation as 'same' | 'public' | 'cross',
          { requester: rAction as Action, worker: wAction as Action },
          { requester: rMode as ApprovalMode, worker: wMode as ApprovalMode },
        );
        if (JSON.stringify(actual) !== JSON.stringify(want)) {
          mismatches.push(`${[relation, rAction, wAction, rMode, wMode].join(' ')}: ${JSON.stringify(actual)}`);
        }
      }
      expect(mismatches).toEqual([]);
      expect(cases).toHaveLength(3 * 4 * 4 * 3 * 3);
    });

    it('among equally specific rules, block beats allow and allow beats ask, in any order', () => {
      const requester = party('requester', 'org-r');
      const worker = party('worker', 'org-w');
      const of = (action: RuleAction) => rule(action, 'worker', 'inbound', action, { identity: 'requester' });
      for (const [rules, winner] of [
        [[of('ask'), of('allow')], 'allow'],
        [[of('allow'), of('ask')], 'allow'],
        [[of('ask'), of('block'), of('allow')], 'block'],
        [[of('allow'), of('block')], 'block'],
      ] as const) {
        expect(effectiveRule(rules, 'worker', worker, requester)?.id).toBe(winner);
      }
    });

    it('a more specific ask beats a broader allow', () => {
      const rules = [
        rule('org-allow', 'worker', 'inbound', 'allow', { organization: 'org-r' }),
        rule('identity-ask', 'worker', 'inbound', 'ask', { identity: 'requester' }),
        rule('r', 'requester', 'outbound', 'allow', { organization: 'org-w' }),
      ];
      expect(decide(party('requester', 'org-r'), party('worker', 'org-w'), rules)).toMatchObject({
        allowed: true,
        reason: 'approval_required_by_worker',
        approval: ['worker'],
        decidedBy: null,
      });
    });
  });

  describe("a side's stance (the check's own_stance, docs/api.md §6 steps 2 and 5)", () => {
    // Written from the contract: a block rule blocks whatever the mode; an allow rule permits;
    // an ask rule asks; with no rule, the filter mode answers (blacklist permits, approval asks,
    // whitelist refuses).
    const table: ReadonlyArray<[RuleAction | null, 'whitelist' | 'blacklist' | 'approval', string]> = [
      ['block', 'whitelist', 'blocks'],
      ['block', 'blacklist', 'blocks'],
      ['block', 'approval', 'blocks'],
      ['allow', 'whitelist', 'permits'],
      ['allow', 'blacklist', 'permits'],
      ['allow', 'approval', 'permits'],
      ['ask', 'whitelist', 'asks'],
      ['ask', 'blacklist', 'asks'],
      ['ask', 'approval', 'asks'],
      [null, 'whitelist', 'refuses'],
      [null, 'blacklist', 'permits'],
      [null, 'approval', 'asks'],
    ];
    it.each(table)('%s rule in %s mode: %s', (action, filterMode, stance) => {
      expect(sideStance(action === null ? null : { action }, { filterMode })).toBe(stance);
    });
  });
});

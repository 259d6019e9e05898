import {
  decide,
  decidePair,
  type AdmissionParty,
  type AdmissionReason,
  type RuleAction,
  type RuleDirection,
  type RuleFacts,
} from './admission.decision';

/*
 * Per-skill rules (docs/api.md §16), checked against a model written from the contract,
 * not derived from the code: a rule with skills applies only to a call naming one of
 * them, and then beats every rule without skills, however specific; a rule with skills
 * never applies to a call naming another skill or none. The §6 model
 * (admission.decision.spec.ts) covers everything else, so here the rest is held fixed:
 * two organizations, both in the whitelist mode, the requester allowing the worker.
 */

const requester: AdmissionParty = {
  id: 'requester',
  organizationId: 'org-r',
  claimed: true,
  enabled: true,
  status: 'active',
  publiclyDiscoverable: false,
  allowPublicEgress: false,
  filterMode: 'whitelist',
};
const worker: AdmissionParty = { ...requester, id: 'worker', organizationId: 'org-w' };

/** A worker's rule about the requester (or the requester's rule about the worker). */
function rule(id: string, action: RuleAction, skills: string[], at: Partial<RuleFacts> = {}): RuleFacts {
  return {
    id,
    identityId: 'worker',
    direction: 'inbound',
    action,
    peerType: 'identity',
    peerIdentityId: 'requester',
    peerOrganizationId: null,
    skills,
    ...at,
  };
}
const requesterAllows = rule('r', 'allow', [], {
  identityId: 'requester',
  direction: 'outbound',
  peerIdentityId: 'worker',
});
/** The least specific place a worker's rule can be: `both`, naming the requester's organization. */
const broadest = (direction: RuleDirection = 'both'): Partial<RuleFacts> => ({
  direction,
  peerType: 'organization',
  peerIdentityId: null,
  peerOrganizationId: 'org-r',
});

type Action = 'none' | RuleAction;
const ACTIONS: readonly Action[] = ['none', 'allow', 'block', 'ask'];

/** The worker's stance, hand-written: its effective action → the outcome (whitelist: no rule refuses). */
const OUTCOME: Record<Action, { allowed: boolean; reason: AdmissionReason }> = {
  none: { allowed: false, reason: 'not_permitted_by_worker' },
  allow: { allowed: true, reason: 'mutual_permit' },
  block: { allowed: false, reason: 'blocked_by_worker' },
  ask: { allowed: true, reason: 'approval_required_by_worker' },
};

describe('per-skill rules (docs/api.md §16)', () => {
  // The worker: a rule without skills at the most specific place (inbound, naming the
  // requester), a rule for `translate` at the least specific place, and a rule for
  // `summarize` at the most specific place; each absent or one of the actions.
  const cases = ACTIONS.flatMap((plain) =>
    ACTIONS.flatMap((translate) =>
      ACTIONS.flatMap((summarize) =>
        [null, 'translate', 'summarize', 'unknown'].map((skill) => ({ plain, translate, summarize, skill })),
      ),
    ),
  );

  it('matches the model for every rule with and without skills, and every skill a call can name', () => {
    const mismatches: string[] = [];
    for (const c of cases) {
      const rules = [
        requesterAllows,
        ...(c.plain === 'none' ? [] : [rule('plain', c.plain, [])]),
        ...(c.translate === 'none' ? [] : [rule('translate', c.translate, ['review', 'translate'], broadest())]),
        ...(c.summarize === 'none' ? [] : [rule('summarize', c.summarize, ['summarize'])]),
      ];
      // The model: the rule for the named skill when there is one, else the rule without skills.
      const named = c.skill === 'translate' ? c.translate : c.skill === 'summarize' ? c.summarize : 'none';
      const effective = named !== 'none' ? named : c.plain;
      const d = decide(requester, worker, [...rules].reverse(), c.skill);
      const actual = { allowed: d.allowed, reason: d.reason, skill: d.skill };
      const expected = { ...OUTCOME[effective], skill: c.skill };
      if (JSON.stringify(actual) !== JSON.stringify(expected)) {
        mismatches.push(`${JSON.stringify(c)}: ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`);
      }
    }
    expect(mismatches).toEqual([]);
    expect(cases).toHaveLength(4 * 4 * 4 * 4);
  });

  it('among rules with the skill, block beats allow beats ask; the direction and peer still rank them', () => {
    const translate = (id: string, action: RuleAction, at: Partial<RuleFacts> = {}) =>
      rule(id, action, ['translate'], at);
    const effective = (rules: RuleFacts[]) => decide(requester, worker, rules, 'translate').effective.worker?.id;
    expect(effective([translate('allow', 'allow'), translate('block', 'block'), translate('ask', 'ask')])).toBe(
      'block',
    );
    expect(effective([translate('ask', 'ask'), translate('allow', 'allow')])).toBe('allow');
    expect(effective([translate('broad-block', 'block', broadest()), translate('allow', 'allow')])).toBe('allow');
    expect(
      effective([translate('inbound-org', 'ask', broadest('inbound')), translate('both', 'allow', broadest())]),
    ).toBe('inbound-org');
  });

  it("the requester's rules with skills count for the skills it calls", () => {
    const open = [rule('w', 'allow', [])];
    const blocks = rule('r', 'block', ['translate'], {
      identityId: 'requester',
      direction: 'outbound',
      peerIdentityId: 'worker',
    });
    const rules = [requesterAllows, blocks, ...open];
    expect(decide(requester, worker, rules, 'translate')).toMatchObject({
      allowed: false,
      reason: 'blocked_by_requester',
    });
    expect(decide(requester, worker, rules, 'summarize')).toMatchObject({ allowed: true, reason: 'mutual_permit' });
  });

  describe('a call that names no skill of its own (decidePair)', () => {
    it('is admitted when a call naming no skill would be', () => {
      const rules = [requesterAllows, rule('plain', 'allow', []), rule('t', 'block', ['translate'])];
      expect(decidePair(requester, worker, rules)).toMatchObject({ allowed: true, skill: null });
    });

    it('or when a call naming one of the skills its rules name would be', () => {
      const rules = [requesterAllows, rule('t', 'block', ['translate']), rule('s', 'allow', ['summarize'])];
      expect(decidePair(requester, worker, rules)).toMatchObject({ allowed: true, skill: 'summarize' });
    });

    it("and is otherwise denied as the call naming no skill is, by whoever's rules deny it", () => {
      const rules = [requesterAllows, rule('t', 'block', ['translate'])];
      expect(decidePair(requester, worker, rules)).toMatchObject({
        allowed: false,
        skill: null,
        reason: 'not_permitted_by_worker',
      });
      const unclaimed = { ...requester, claimed: false };
      const allowsAll = [requesterAllows, rule('s', 'allow', ['summarize'])];
      expect(decidePair(unclaimed, worker, allowsAll)).toMatchObject({ allowed: false, reason: 'requester_unclaimed' });
    });
  });
});

import { canonicalizeAgentCard, type AgentCard } from '@a2a-js/sdk';
import type { Identity } from '../identities/identity.entity';
import { DEFAULT_SKILL_ID } from '../identities/card-skills';
import { cardGeneration, toCard, toV1Card } from './agent-card';
import { canonicalCardPayload } from './card-canonical';

const identity = (over: Partial<Identity> = {}) =>
  ({
    agentHandle: 'acme-billing',
    displayName: '',
    description: '',
    cardVersion: 3,
    skills: [
      { id: 'open', name: 'Open', description: 'o', tags: [], examples: [] },
      { id: 'secret', name: 'Secret', description: 's', tags: ['x'], visibility: 'admitted' },
    ],
    ...over,
  }) as Identity;
const subject = (audience: 'public' | 'admitted', over: Partial<Identity> = {}) => ({
  identity: identity(over),
  organizationName: 'Acme',
  baseUrl: 'https://a2a.example',
  audience,
});

describe('agent cards', () => {
  it("A2A-Version picks the generation as the SDK's agentCardHandler with legacyCompat does", () => {
    for (const header of [undefined, '', ' ', '0.3', '0.3.1', '0.9']) {
      expect(cardGeneration(header)).toBe('0.3');
    }
    for (const header of ['1.0', '1.1', '2.0', '0.2', 'latest']) {
      expect(cardGeneration(header)).toBe('1.0');
    }
  });

  it('the public card leaves admitted skills out and never shows visibility; the extended card has them', () => {
    expect(toV1Card(subject('public')).skills).toEqual([
      { id: 'open', name: 'Open', description: 'o', tags: ['open'] },
    ]);
    expect(toV1Card(subject('admitted')).skills.map((skill) => skill.id)).toEqual(['open', 'secret']);
    expect(JSON.stringify(toCard(subject('admitted'), '0.3'))).not.toContain('visibility');
  });

  it('a card always has a description and a skill, and each skill a description and a tag (A2A v1.0 §5.7)', () => {
    const bare = toV1Card(subject('public', { skills: [] }));
    expect(bare.description).toBe('The agent acme-billing, reached over A2A.');
    expect(bare.skills).toEqual([
      { id: DEFAULT_SKILL_ID, name: 'acme-billing', description: bare.description, tags: [DEFAULT_SKILL_ID] },
    ]);
    const described = toV1Card(subject('public', { displayName: 'Billing', description: 'Bills.', skills: [] }));
    expect(described.skills).toEqual([{ id: 'agent', name: 'Billing', description: 'Bills.', tags: ['agent'] }]);
    // Only admitted skills: the public card stands for the agent; the extended card shows them.
    const admittedOnly = { skills: [identity().skills[1]] };
    expect(toV1Card(subject('public', admittedOnly)).skills.map((skill) => skill.id)).toEqual(['agent']);
    expect(toV1Card(subject('admitted', admittedOnly)).skills.map((skill) => skill.id)).toEqual(['secret']);
    const blank = { skills: [{ id: 'lookup', name: 'Lookup', description: ' ', tags: [] }] };
    expect(toV1Card(subject('public', blank)).skills).toEqual([
      { id: 'lookup', name: 'Lookup', description: 'Lookup', tags: ['lookup'] },
    ]);
  });

  it("the signed payload of a v1.0 card is exactly the SDK's canonical form, empty values included", () => {
    for (const card of [
      toV1Card(subject('public')),
      toV1Card(subject('admitted', { description: 'Bills.', displayName: 'Billing' })),
    ]) {
      expect(canonicalCardPayload(card)).toBe(canonicalizeAgentCard(card as unknown as AgentCard));
      expect(canonicalCardPayload({ ...card, signatures: [{ protected: 'p', signature: 's' }] })).toBe(
        canonicalCardPayload(card),
      );
    }
  });
});

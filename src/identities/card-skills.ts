import type { AgentSkill, Identity } from './identity.entity';

/** Which skills a card shows: the public card never carries an `admitted` skill. */
export type SkillAudience = 'public' | 'admitted';

/** The id (and tag) of the skill a card shows for an agent that shows its audience none (docs/api.md §4). */
export const DEFAULT_SKILL_ID = 'agent';

/**
 * The skills a card shows its audience (docs/api.md §4): the `public` ones, and on the
 * extended card the `admitted` ones too — those `admits` lets through (the caller's
 * admission to each, docs/api.md §16).
 */
export function shownSkills(
  skills: ReadonlyArray<AgentSkill>,
  audience: SkillAudience,
  admits: (skillId: string) => boolean = () => true,
): AgentSkill[] {
  return skills.filter((skill) => isPublic(skill) || (audience === 'admitted' && admits(skill.id)));
}

const isPublic = (skill: AgentSkill) => (skill.visibility ?? 'public') === 'public';

/**
 * The skill ids an identity's cards show `audience` — what a call may name, and a
 * contact rule (docs/api.md §16): its skills of that audience, and the standing
 * DEFAULT_SKILL_ID while the public card shows it (no public skill).
 */
export function cardSkillIds(identity: Pick<Identity, 'skills'>, audience: SkillAudience): Set<string> {
  const ids = new Set(shownSkills(identity.skills, audience).map((skill) => skill.id));
  if (!identity.skills.some(isPublic)) {
    ids.add(DEFAULT_SKILL_ID);
  }
  return ids;
}

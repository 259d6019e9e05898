import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { EmptyState } from '../empty-state';
import { api, call } from '../api';
import { useFormMutation } from '../form-mutation';
import type { Identity, Skill } from '../types';
import { ErrorNotice, Field, Select, Submit, SuccessNotice, TextArea, type FieldErrors } from '../ui';

interface SkillDraft {
  id: string;
  name: string;
  description: string;
  tags: string;
  visibility: SkillVisibility;
}

type SkillVisibility = NonNullable<Skill['visibility']>;

/** What each skill visibility means to whoever reads the card (docs/api.md §3, §4). */
const VISIBILITY_LABELS: Record<SkillVisibility, string> = {
  public: 'public',
  admitted: 'admitted only',
};
const VISIBILITY_HINT =
  'Public skills are on the public card and in the directory; admitted-only skills appear only on the extended card, to callers admitted to call this agent.';

/** The saved skills as callers see them: each with its visibility. */
function SavedSkills({ skills }: { skills: Skill[] }) {
  if (skills.length === 0) {
    return null;
  }
  return (
    <ul aria-label="Skills on the card">
      {skills.map((skill) => {
        const visibility = skill.visibility ?? 'public';
        return (
          <li key={skill.id}>
            {skill.name} <code>{skill.id}</code> ·{' '}
            <span className={`badge ${visibility}`}>{VISIBILITY_LABELS[visibility]}</span>
          </li>
        );
      })}
    </ul>
  );
}

/** The identity's Agent Card as its organization edits it: name, description and skills. */
export function EditCard({ identity }: { identity: Identity }) {
  const client = useQueryClient();
  const [displayName, setDisplayName] = useState(identity.display_name);
  const [description, setDescription] = useState(identity.description);
  const [skills, setSkills] = useState<SkillDraft[]>(
    identity.skills.map((s) => ({
      id: s.id,
      name: s.name,
      description: s.description,
      tags: s.tags.join(', '),
      visibility: s.visibility ?? 'public',
    })),
  );
  const {
    mutation: save,
    submit,
    errorOf,
    notice,
  } = useFormMutation({
    validate: () => {
      const errors: FieldErrors = {};
      if (displayName.length > 100) {
        errors.display_name = 'At most 100 characters.';
      }
      if (description.length > 2000) {
        errors.description = 'At most 2,000 characters.';
      }
      skills.forEach((s, i) => {
        if (!s.id.trim()) {
          errors[`skills.${i}.id`] = 'A skill needs an id.';
        }
        if (!s.name.trim()) {
          errors[`skills.${i}.name`] = 'A skill needs a name.';
        }
      });
      return errors;
    },
    mutationFn: () =>
      call<Identity>(
        api.PATCH('/api/v1/identities/{handle}', {
          params: { path: { handle: identity.agent_handle } },
          body: {
            display_name: displayName,
            description,
            skills: skills.map((s): Skill => ({
              id: s.id.trim(),
              name: s.name.trim(),
              description: s.description.trim(),
              tags: s.tags
                .split(',')
                .map((t) => t.trim())
                .filter(Boolean),
              visibility: s.visibility,
            })),
          },
        }),
      ),
    onSuccess: (updated) => {
      client.setQueryData(['identity', identity.agent_handle], updated);
      void client.invalidateQueries({ queryKey: ['identities'] });
    },
  });
  const setSkill = (index: number, patch: Partial<SkillDraft>) =>
    setSkills(skills.map((s, i) => (i === index ? { ...s, ...patch } : s)));
  return (
    <section aria-labelledby="card-title">
      <h2 id="card-title">Agent Card</h2>
      <form onSubmit={submit} noValidate>
        <Field
          label="Display name"
          value={displayName}
          onChange={(e) => setDisplayName(e.target.value)}
          error={errorOf('display_name')}
        />
        <TextArea
          label="Description"
          value={description}
          onChange={(e) => setDescription(e.target.value)}
          error={errorOf('description')}
        />
        <SavedSkills skills={identity.skills} />
        <fieldset>
          <legend>Skills</legend>
          {skills.length === 0 && <EmptyState>No skills.</EmptyState>}
          {skills.map((skill, i) => (
            <div className="skill" key={i}>
              <Field
                label={`Skill ${i + 1} id`}
                value={skill.id}
                onChange={(e) => setSkill(i, { id: e.target.value })}
                error={errorOf(`skills.${i}.id`)}
              />
              <Field
                label={`Skill ${i + 1} name`}
                value={skill.name}
                onChange={(e) => setSkill(i, { name: e.target.value })}
                error={errorOf(`skills.${i}.name`)}
              />
              <Field
                label={`Skill ${i + 1} description`}
                value={skill.description}
                onChange={(e) => setSkill(i, { description: e.target.value })}
              />
              <Field
                label={`Skill ${i + 1} tags`}
                value={skill.tags}
                onChange={(e) => setSkill(i, { tags: e.target.value })}
                hint="Comma-separated."
              />
              <Select
                label={`Skill ${i + 1} visibility`}
                value={skill.visibility}
                onChange={(e) => setSkill(i, { visibility: e.target.value as SkillVisibility })}
                hint={VISIBILITY_HINT}
                error={errorOf(`skills.${i}.visibility`)}
              >
                <option value="public">{VISIBILITY_LABELS.public}</option>
                <option value="admitted">{VISIBILITY_LABELS.admitted}</option>
              </Select>
              <button type="button" onClick={() => setSkills(skills.filter((_, j) => j !== i))}>
                Remove skill {i + 1}
              </button>
            </div>
          ))}
          <button
            type="button"
            onClick={() =>
              setSkills([...skills, { id: '', name: '', description: '', tags: '', visibility: 'public' }])
            }
          >
            Add a skill
          </button>
        </fieldset>
        <ErrorNotice error={notice} />
        {save.isSuccess && <SuccessNotice>Card saved.</SuccessNotice>}
        <Submit pending={save.isPending} pendingLabel="Saving…">
          Save card
        </Submit>
      </form>
    </section>
  );
}

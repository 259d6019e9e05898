import type { Message } from '@a2a-js/sdk';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import { cardSkillIds } from '../identities/card-skills';
import type { Identity } from '../identities/identity.entity';
import { SKILL_LIMITS } from '../identities/dto/agent-skill.dto';

/**
 * The skill a message names (docs/api.md §16): its `metadata` entry under the skill
 * extension's URI (skillExtensionUri), or null. Read from the message as the SDK's
 * transports hand it to the request handler, so every binding and generation reads it
 * the same way. Anything but a skill id there is invalid params.
 */
export function skillNamed(message: Pick<Message, 'metadata'> | undefined, extensionUri: string): string | null {
  const value: unknown = message?.metadata?.[extensionUri];
  if (value === undefined || value === null) {
    return null;
  }
  if (typeof value !== 'string' || value.length === 0 || value.length > SKILL_LIMITS.id) {
    throw new RequestMalformedError(
      `message.metadata["${extensionUri}"] must be the id of a skill of the worker's card (a string of 1 to ${SKILL_LIMITS.id} characters).`,
    );
  }
  return value;
}

/**
 * A call names a skill of the worker's card, or none unless the worker requires one
 * (`require_skill`); else invalid params, saying why (docs/api.md §16). Asked after
 * admission for that skill, so a caller learns of a skill only what its card shows it.
 */
export function requireCallableSkill(worker: Identity, skill: string | null, extensionUri: string): void {
  if (skill === null) {
    if (worker.requireSkill) {
      throw new RequestMalformedError(
        `${worker.agentHandle} requires every message to name a skill of its card: message.metadata["${extensionUri}"].`,
      );
    }
    return;
  }
  if (!cardSkillIds(worker, 'admitted').has(skill)) {
    throw new RequestMalformedError(`${worker.agentHandle}'s card has no skill '${skill}'.`);
  }
}

import type { AgentCard } from '@a2a-js/sdk';
import { isObject } from '../common/json-object';

/*
 * An upstream's Agent Card is the upstream's JSON: its members may be of any type, whatever
 * the SDK's types say. What the service reads of it is checked here — a card whose members
 * have the wrong type is no card (`cardShapeProblem`), and its texts are read as text only.
 */

/** A card's text, clipped to `max` characters; '' when it is not text. */
export function clip(value: unknown, max: number): string {
  if (typeof value !== 'string') {
    return '';
  }
  return value.length > max ? value.slice(0, max) : value;
}

/** The card's members as an array when they are one; none otherwise. */
export function listOf<T>(value: T[] | undefined): T[] {
  return Array.isArray(value) ? value : [];
}

/**
 * Why a card read is not an Agent Card the service can use (`name`, `description`,
 * `version` not text; `supportedInterfaces` not a list of interfaces each with a text
 * `url` and `protocolBinding`; `skills` not a list of objects; `capabilities` not an
 * object), in a status message's words; null when it is one. Members the card omits are
 * not its problem here.
 */
export function cardShapeProblem(card: AgentCard): string | null {
  const value = card as unknown;
  if (!isObject(value)) {
    return 'its Agent Card is not a JSON object';
  }
  for (const field of ['name', 'description', 'version'] as const) {
    if (value[field] !== undefined && typeof value[field] !== 'string') {
      return `its Agent Card's ${field} is not text`;
    }
  }
  const interfaces = value.supportedInterfaces;
  if (
    interfaces !== undefined &&
    !(
      Array.isArray(interfaces) &&
      interfaces.every(
        (i: unknown) =>
          isObject(i) &&
          typeof i.url === 'string' &&
          typeof i.protocolBinding === 'string' &&
          (i.protocolVersion === undefined || typeof i.protocolVersion === 'string'),
      )
    )
  ) {
    return "its Agent Card's supportedInterfaces is not a list of interfaces, each with a url and protocolBinding";
  }
  if (value.skills !== undefined && !(Array.isArray(value.skills) && value.skills.every(isObject))) {
    return "its Agent Card's skills is not a list of skills";
  }
  if (value.capabilities !== undefined && !isObject(value.capabilities)) {
    return "its Agent Card's capabilities is not an object";
  }
  return null;
}

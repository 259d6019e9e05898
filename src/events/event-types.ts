/** The event types (docs/api.md §8), and the Console's (§13). */
export const EVENT_TYPES = [
  'task.created',
  'task.message',
  'task.status',
  'task.artifact',
  'api_key.created',
  'api_key.revoked',
  'api_key.expiring',
  'identity.claimed',
  'identity.updated',
  'contact_rule.created',
  'contact_rule.updated',
  'contact_rule.deleted',
  'console.member_added',
  'console.member_removed',
  'approval.requested',
  'approval.decided',
  'usage.threshold',
  'ping',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/** A subscription's filter: every type, or a list of them. */
export const ALL_EVENTS = '*';

/**
 * Types that never concern an identity in the sense of identity-scoped subscriptions:
 * an identity's own key may not read the organization's key metadata, so a webhook
 * scoped to one identity never receives them (only organization-wide ones do).
 */
export const ORGANIZATION_ONLY_TYPES: readonly EventType[] = [
  'api_key.created',
  'api_key.revoked',
  'api_key.expiring',
  'console.member_added',
  'console.member_removed',
  // Approval requests are for the deciding organization's people (admin keys, Console), never an agent's key.
  'approval.requested',
  'approval.decided',
];

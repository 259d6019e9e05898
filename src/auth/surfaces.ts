import type { CredentialKind } from '../common/principal';

/**
 * Who may reach each surface — docs/api.md §1's credential-per-surface table and the
 * "Who" columns of its operation tables, in one place. Every route names one row with
 * `@Surface(...)`; the global ApiKeyGuard enforces it. Finer rules that depend on
 * the resource (same organization, own identity, per-field settings) belong to the
 * services and AccessService, never to controllers.
 */
export interface SurfacePolicy {
  /** Accepted credential kinds; empty means public (no credential needed). */
  readonly credentials: readonly CredentialKind[];
  /** An agent key must be bound to a claimed identity. */
  readonly claimed: boolean;
}

const PUBLIC: SurfacePolicy = { credentials: [], claimed: false };

export const SURFACES = {
  // --- no credential ---------------------------------------------------------
  /** Public directory, Agent Card (docs/api.md §4: no credential), health, docs, Console login. */
  public: PUBLIC,

  // --- docs/api.md §1, the credential per surface -----------------------------
  /** Organization directory: admin key, claimed agent key, or Console. */
  organizationDirectory: { credentials: ['admin', 'agent', 'console'], claimed: true },
  /** Protocol `POST /a2a/{handle}`: agent key of a claimed identity only. */
  protocol: { credentials: ['agent'], claimed: true },
  /** Ledger reads (tasks, messages, contexts, settings, contact rules) and replies. */
  ledger: { credentials: ['admin', 'agent', 'console'], claimed: true },
  /** Create, update, delete contact rules. */
  contactRuleAdmin: { credentials: ['admin', 'console'], claimed: false },

  // --- API keys (docs/api.md §2, who may mint) ----------------------------------
  /** The calling key itself, any scope, claimed or not: read and revoke self. */
  keySelf: { credentials: ['admin', 'agent'], claimed: false },
  /** Mint (scope rules in KeysService), list and read keys of the organization. */
  keyAdmin: { credentials: ['admin', 'console'], claimed: false },

  // --- identities (docs/api.md §3) ---------------------------------------------
  /** Create, delete identities; admission explanations; approval requests (docs/api.md §16: admin key or Console). */
  organizationAdmin: { credentials: ['admin', 'console'], claimed: false },
  /** Read an identity: admin key, Console, or its own key (even unclaimed). Settings reads are `ledger` (docs/api.md §1). */
  identityRead: { credentials: ['admin', 'agent', 'console'], claimed: false },
  /** Read an identity's upstream agent (docs/api.md §14): admin key, Console, or its own claimed key — never the secret. */
  upstreamRead: { credentials: ['admin', 'agent', 'console'], claimed: true },
  /** Edit card, change settings (per-field rules in IdentitiesService). */
  identityWrite: { credentials: ['admin', 'agent', 'console'], claimed: true },

  // --- events (docs/api.md §8) ---------------------------------------------------
  /**
   * Webhooks, their deliveries, secret rotation and test pings: "Admin key or Console:
   * organization-wide or for one of its identities. Claimed agent key: its own
   * identity's events only" (the identity rule lives in WebhooksService).
   */
  webhooks: { credentials: ['admin', 'agent', 'console'], claimed: true },
  /**
   * The event list and stream (docs/api.md §14): "admin key or Console: the organization's;
   * claimed agent key: its identity's" (the scope is EventStreamService's).
   */
  events: { credentials: ['admin', 'agent', 'console'], claimed: true },

  // --- Console only --------------------------------------------------------------
  /** Console session routes, key label edits and revocation of other keys, claims. */
  console: { credentials: ['console'], claimed: false },
} as const satisfies Record<string, SurfacePolicy>;

export type SurfaceName = keyof typeof SURFACES;

export const CREDENTIAL_LABELS: Record<CredentialKind, string> = {
  admin: 'admin-scoped API key',
  agent: 'agent-scoped API key',
  console: 'Console session',
};

export function describeSurface(name: SurfaceName): string {
  const policy: SurfacePolicy = SURFACES[name];
  if (policy.credentials.length === 0) {
    return 'No credential.';
  }
  const kinds = policy.credentials.map((kind) =>
    kind === 'agent' && policy.claimed ? 'agent-scoped API key of a claimed identity' : CREDENTIAL_LABELS[kind],
  );
  return `Accepts: ${kinds.join(', ')}.`;
}

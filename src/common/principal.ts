// Who is calling: the principal an authenticated request carries (req.principal), in
// common/ because the request context and the request log need it, below auth/.

/** The kinds of credential a route can accept (docs/api.md §1). */
export type CredentialKind = 'admin' | 'agent' | 'console';

export interface AdminKeyPrincipal {
  kind: 'admin';
  /** The API key's id. */
  id: string;
  /** The key's label (the audit log names the actor by it). */
  label?: string;
  organizationId: string;
}

export interface AgentKeyPrincipal {
  kind: 'agent';
  /** The API key's id. */
  id: string;
  label?: string;
  /** The bound identity's organization; null while the identity is unclaimed. */
  organizationId: string | null;
  identity: {
    id: string;
    handle: string;
    claimed: boolean;
    enabled: boolean;
  };
  /**
   * `performance.now()` before the key was read: what was committed and counted before
   * it, this request's checks saw (an open call's standing starts from it: CallStanding).
   */
  checkedAt?: number;
  /**
   * Admission's version as the key's lookup read it (`admission_version`): a call's
   * parties read at the same version still hold (AdmissionService.admitCall).
   */
  admissionVersion?: string;
  /** When the key expires, as its lookup read it (null: never); an open call is not vouched for past it (CallStanding). */
  expiresAt?: Date | null;
  /**
   * A trusted issuer's JWT, not a key (docs/api.md §17): `id` is then the trust's id, and
   * the call's standing is the trust's (AccessTokenVerifier.lostStanding), not a key's.
   */
  federated?: boolean;
}

export interface ConsolePrincipal {
  kind: 'console';
  /** The Console user's id. */
  id: string;
  sessionId: string;
  organizationId: string;
  /** Cookie sessions need CSRF protection; bearer sessions do not. */
  viaCookie: boolean;
}

export type Principal = AdminKeyPrincipal | AgentKeyPrincipal | ConsolePrincipal;
export type KeyPrincipal = AdminKeyPrincipal | AgentKeyPrincipal;

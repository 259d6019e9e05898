/**
 * Every error `code` this service answers with, its HTTP status and what it means:
 * the one list behind problem+json's `code`, the protocol's `reason`, the A2A mapping
 * (src/protocol/a2a-errors.ts) and the table in docs/api.md §9 (kept in step by
 * error-codes.spec.ts). `AppError` and its helpers take only these codes, and only
 * with a status listed here, so a typo or a code used with the wrong status does not
 * compile.
 */
export interface ErrorCodeSpec {
  /** The status the code is answered with; a list when the same code has more than one. */
  readonly status: number | readonly number[];
  /** When it happens, in one line (docs/api.md shows it). */
  readonly doc: string;
}

export const ERROR_CODES = {
  // --- 400 ---------------------------------------------------------------------
  bad_request: {
    status: 400,
    doc: 'A request the framework refused, without a code of its own (also used for such an error of another 4xx status).',
  },
  validation_failed: { status: 400, doc: 'The body, query or path is not valid; `errors` names each field.' },
  malformed_json: { status: 400, doc: 'The request body is not valid JSON.' },
  malformed_protobuf: { status: 400, doc: "A gRPC request is not a valid protobuf message of its method's type." },
  body_too_deep: { status: 400, doc: 'The request body nests deeper than the service accepts.' },
  nul_character: { status: 400, doc: 'The path, the query or the request body contains a NUL character.' },
  invalid_content_encoding: {
    status: 400,
    doc: 'A compressed body (Content-Encoding gzip, deflate or br) does not decompress.',
  },
  invalid_value: { status: 400, doc: 'A value the database refuses (wrong format, out of range, too long).' },
  invalid_cursor: { status: 400, doc: 'The cursor is not a next_cursor of a previous page.' },
  invalid_idempotency_key: { status: 400, doc: 'Idempotency-Key is not 1 to 255 visible ASCII characters.' },
  invalid_last_event_id: { status: 400, doc: 'Last-Event-ID is not an event id of the stream.' },
  unknown_event: { status: 400, doc: 'The event id to resume after is unknown or older than the retention period.' },
  invalid_peer: { status: 400, doc: 'A contact rule names its own identity as the peer.' },
  invalid_webhook_url: {
    status: 400,
    doc: 'A webhook URL is not acceptable (not https, credentials, a private address).',
  },
  invalid_push_url: { status: 400, doc: 'A push notification URL is not acceptable (as for webhooks).' },
  invalid_issuer_url: {
    status: 400,
    doc: "A trusted issuer's `issuer` or `jwks_uri` is not acceptable (as for webhooks; docs/api.md §17).",
  },
  invalid_upstream_url: { status: 400, doc: 'An upstream agent URL is not acceptable (as for webhooks).' },
  invalid_trusted_keys: {
    status: 400,
    doc: "An upstream's trusted_keys is not a JWK Set of public keys, or comes with trusted_jwks_uri.",
  },
  invalid_push_config: { status: 400, doc: 'A push notification config is not valid.' },
  push_config_limit: { status: 400, doc: 'The task already has its maximum of push notification configs.' },
  context_mismatch: { status: 400, doc: "A message's contextId is not the context of its task." },
  skill_mismatch: {
    status: 400,
    doc: 'A message continuing a task names another skill than the task (docs/api.md §16).',
  },
  invalid_request: {
    status: 400,
    doc: '`POST /oauth/token`: a parameter is missing, repeated or not valid (RFC 6749 §5.2; docs/api.md §17).',
  },
  unsupported_grant_type: {
    status: 400,
    doc: '`POST /oauth/token`: a `grant_type` other than `client_credentials` and token exchange (docs/api.md §17).',
  },
  invalid_grant: {
    status: 400,
    doc: "`POST /oauth/token`, token exchange: the subject token is refused as a trusted issuer's bearer JWT would be; the detail names the reason (RFC 8693 §2.2.2; docs/api.md §17).",
  },
  invalid_target: {
    status: 400,
    doc: '`POST /oauth/token`, token exchange: an `audience` or `resource` that is not this service (RFC 8693 §2.2.2; docs/api.md §17).',
  },
  invalid_scope: { status: 400, doc: "`POST /oauth/token`: a `scope` other than the key's own (docs/api.md §17)." },
  wrong_password: { status: 400, doc: 'The current password given to change it is incorrect.' },
  tree_too_deep: {
    status: 400,
    doc: 'A send would start a task deeper in its delegation tree than `LEDGER_MAX_TREE_DEPTH` (docs/api.md §18).',
  },

  // --- 401 ---------------------------------------------------------------------
  unauthenticated: {
    status: 401,
    doc: "No credential, or one that is not valid. Every 401 of the protocol has this reason, but an expired key's (`api_key_expired`).",
  },
  invalid_api_key: { status: 401, doc: 'The API key is unknown or revoked (also: revoked while a stream was open).' },
  api_key_expired: {
    status: 401,
    doc: 'The API key has expired: its `expires_at` has passed (also: expired while a stream was open). The protocol names it as its reason too.',
  },
  invalid_session: { status: 401, doc: 'The Console session is unknown, expired or ended.' },
  invalid_client: {
    status: 401,
    doc: '`POST /oauth/token`: the client (key id and key) is unknown, revoked, expired or does not match (docs/api.md §17).',
  },
  invalid_token: {
    status: 401,
    doc: "A bearer access token or trusted issuer's JWT is refused; the detail names the reason (docs/api.md §17).",
  },
  invalid_credentials: { status: 401, doc: 'Console login with a wrong email or password.' },
  sso_state_invalid: {
    status: 401,
    doc: "A single sign-on callback (its `sso_error`) without its sign-in: no sign-in cookie or another browser's, a wrong or used `state`, or over 10 minutes late.",
  },
  sso_sign_in_failed: {
    status: 401,
    doc: 'A single sign-on callback (its `sso_error`): the provider refused or failed the sign-in, or its ID token is not valid.',
  },

  // --- 403 ---------------------------------------------------------------------
  forbidden: { status: 403, doc: 'A refusal of the framework without a code of its own.' },
  admin_key_not_allowed: { status: 403, doc: 'The route does not accept an admin-scoped key (e.g. the protocol).' },
  agent_key_not_allowed: { status: 403, doc: 'The route does not accept an agent-scoped key (e.g. minting keys).' },
  console_session_not_allowed: { status: 403, doc: 'The route does not accept a Console session (e.g. the protocol).' },
  not_an_api_key: {
    status: 403,
    doc: "A trusted issuer's token on a route about the calling key itself (docs/api.md §17): it is no key.",
  },
  identity_unclaimed: { status: 403, doc: 'The identity of the agent key is not claimed yet.' },
  identity_not_own: { status: 403, doc: 'An agent-scoped key acting on another identity.' },
  own_identity_only: { status: 403, doc: "An agent-scoped key subscribing to another identity's events." },
  setting_not_permitted: {
    status: 403,
    doc: "An identity's own key changing a setting only an admin key or the Console may change.",
  },
  admin_mint_forbidden: { status: 403, doc: 'Admin-scoped keys are minted from a Console session only.' },
  not_task_worker: { status: 403, doc: "Only the task's worker may reply to it." },
  requester_disabled: { status: 403, doc: "The caller's own receiver is disabled (protocol)." },
  admission_denied: { status: 403, doc: 'Admission refuses the call between these two identities (protocol).' },
  csrf_failed: { status: 403, doc: 'A cookie-authenticated change that does not come from the Console origin.' },
  route_not_declared: { status: 403, doc: 'The route declares no credential policy and is closed.' },
  signup_closed: { status: 403, doc: 'Console signup is closed on this service.' },
  sso_email_unverified: {
    status: 403,
    doc: 'A single sign-on callback (its `sso_error`): the provider does not vouch for the email (`email_verified` is not true).',
  },
  sso_no_account: {
    status: 403,
    doc: 'A single sign-on callback (its `sso_error`): no Console user, open invitation or organization email domain for the verified email.',
  },
  password_sign_in_disabled: {
    status: 403,
    doc: "The person's organization has turned password sign-in off: they sign in with the provider.",
  },

  // --- 404 ---------------------------------------------------------------------
  not_found: { status: 404, doc: 'No such route.' },
  identity_not_found: { status: 404, doc: 'No identity with that handle is visible to the caller.' },
  agent_not_found: { status: 404, doc: 'No enabled, claimed agent has that handle (Agent Card).' },
  worker_not_found: { status: 404, doc: 'No enabled, claimed identity has the protocol handle.' },
  api_key_not_found: { status: 404, doc: 'No API key with that id in the organization.' },
  contact_rule_not_found: { status: 404, doc: 'No contact rule with that id in the organization.' },
  peer_not_found: { status: 404, doc: "The contact rule's peer names no identity or organization." },
  task_not_found: { status: 404, doc: 'No such task visible to the caller.' },
  context_not_found: {
    status: [404, 400],
    doc: 'No such context visible to the caller (404); a send names a context not between its requester and worker (400).',
  },
  push_config_not_found: { status: 404, doc: 'No push notification config with that id on the task.' },
  webhook_not_found: { status: 404, doc: 'No webhook with that id.' },
  delivery_not_found: { status: 404, doc: 'No delivery with that id for the webhook.' },
  upstream_not_set: { status: 404, doc: 'The identity has no upstream agent.' },
  claim_code_invalid: { status: 404, doc: 'The claim code is unknown, already used or expired.' },
  invite_code_invalid: { status: 404, doc: 'The invitation code is unknown, used, withdrawn or expired.' },
  invite_not_found: { status: 404, doc: 'No open invitation with that id.' },
  sso_not_configured: {
    status: [404, 409],
    doc: 'Single sign-on is not configured on this service (404); password sign-in cannot be turned off without it (409).',
  },
  member_not_found: { status: 404, doc: 'No member of the organization with that id.' },
  trusted_issuer_not_found: { status: 404, doc: 'No trusted issuer with that id in the organization.' },
  approval_not_found: { status: 404, doc: 'No approval request with that id for your organization to decide.' },

  // --- 405 ---------------------------------------------------------------------
  method_not_allowed: { status: 405, doc: 'The route does not take that method.' },

  // --- 409 ---------------------------------------------------------------------
  conflict: { status: 409, doc: 'A conflict reported by the framework without a code of its own.' },
  trusted_issuer_taken: {
    status: 409,
    doc: 'That issuer and audience are trusted already (by this or another organization; docs/api.md §17).',
  },
  handle_taken: { status: 409, doc: 'The handle is taken; handles are never reused.' },
  email_taken: { status: 409, doc: 'A Console user with that email already exists.' },
  email_domain_taken: { status: 409, doc: 'Another organization holds that email domain.' },
  identity_deleted: { status: 409, doc: 'The identity has been deleted; it can be read but not changed.' },
  contact_rule_exists: { status: 409, doc: 'The identity already has a rule for that peer in that direction.' },
  rule_limit_reached: { status: 409, doc: 'The identity has its maximum of contact rules.' },
  key_limit_reached: { status: 409, doc: 'The identity has its maximum of active keys.' },
  webhook_limit_reached: { status: 409, doc: 'The organization has its maximum of webhooks.' },
  webhook_disabled: { status: 409, doc: 'The webhook is disabled.' },
  delivery_in_flight: { status: 409, doc: 'The delivery is being attempted right now.' },
  member_limit: { status: 409, doc: 'The organization has its maximum of members.' },
  invite_limit: { status: 409, doc: 'The organization has its maximum of open invitations.' },
  last_member: { status: 409, doc: 'The last member of an organization cannot be removed.' },
  task_terminal: { status: 409, doc: 'The task is terminal and takes no more messages or replies.' },
  task_not_cancelable: { status: 409, doc: 'The task can no longer be canceled.' },
  task_awaiting_approval: {
    status: 409,
    doc: 'The task waits for approval (§16) and takes no messages until it is approved.',
  },
  approval_decided: { status: 409, doc: 'The approval request was decided already, or it expired.' },
  task_message_limit: { status: 409, doc: 'The task holds its maximum of messages.' },
  task_artifact_limit: { status: 409, doc: "The task's artifacts would exceed their maximum size." },
  invalid_transition: { status: 409, doc: 'A worker cannot move the task to that state.' },
  artifact_not_found: { status: 409, doc: 'An append names an artifact the task does not have.' },
  artifact_closed: { status: 409, doc: 'An append to an artifact that already received its last chunk.' },
  usage_currency_mismatch: {
    status: 409,
    doc: "A reply's reported cost is in another currency than the task's earlier reports (docs/api.md §18).",
  },

  // --- 413, 415 --------------------------------------------------------------------
  payload_too_large: { status: 413, doc: 'The request body is larger than the endpoint accepts.' },
  unsupported_media_type: { status: 415, doc: "The body's content type or encoding is not supported." },

  // --- 422 ---------------------------------------------------------------------
  idempotency_key_reused: { status: 422, doc: 'The Idempotency-Key was used with a different request.' },
  upstream_card_unreachable: { status: 422, doc: "The upstream agent's card could not be read." },
  upstream_binding_unsupported: { status: 422, doc: "The upstream's card offers no interface the forwarder speaks." },

  // --- 429 ---------------------------------------------------------------------
  rate_limited: { status: 429, doc: 'A rate limit is exceeded (with Retry-After).' },
  too_many_open_calls: {
    status: 429,
    doc: 'The key holds its maximum of open streams and blocking sends (no Retry-After: a slot frees when a call ends).',
  },
  quota_exceeded: {
    status: 429,
    doc: "The requester's daily task quota or monthly cost budget is used up (docs/api.md §18); `resets_at` and Retry-After say when it resets.",
  },

  // --- 500 ---------------------------------------------------------------------
  internal_error: { status: 500, doc: 'An unexpected error (logged; no details are shown).' },
} as const satisfies Record<string, ErrorCodeSpec>;

export type ErrorCode = keyof typeof ERROR_CODES;

type StatusesOf<C extends ErrorCode> = (typeof ERROR_CODES)[C]['status'] extends infer S
  ? S extends readonly (infer E)[]
    ? E
    : S
  : never;

/** Every status some code is answered with. */
export type ErrorStatus = { [C in ErrorCode]: StatusesOf<C> }[ErrorCode];

/** The codes that may be answered with status `S`. */
export type CodeWithStatus<S extends ErrorStatus> = {
  [C in ErrorCode]: S extends StatusesOf<C> ? C : never;
}[ErrorCode];

/** A code's statuses, as a list. */
export function statusesOf(code: ErrorCode): readonly number[] {
  const status: number | readonly number[] = ERROR_CODES[code].status;
  return typeof status === 'number' ? [status] : status;
}

export const isErrorCode = (value: unknown): value is ErrorCode =>
  typeof value === 'string' && Object.hasOwn(ERROR_CODES, value);

import {
  RequestMalformedError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
  type A2AError,
} from '@a2a-js/sdk/errors';
import type { AppError } from '../common/app-error';
import type { ErrorCode } from '../common/error-codes';

/**
 * The A2A error a protocol method answers with when the ledger (or anything it calls)
 * throws an AppError; each binding renders it in its own form (JSON-RPC code, HTTP+JSON
 * status, gRPC status). `Internal` is not shown: it is logged and replaced by an opaque
 * error. HTTP-level refusals of the checks before the method (docs/api.md §5) do not pass
 * here; problem.filter.ts renders those.
 */
export type A2AErrorKind =
  'TaskNotFound' | 'UnsupportedOperation' | 'TaskNotCancelable' | 'RequestMalformed' | 'Internal';

/**
 * Every code, mapped: a new code in error-codes.ts does not compile until it is
 * placed here. Most codes are client mistakes the method cannot act on: -32602.
 */
export const A2A_ERROR_KIND: Record<ErrorCode, A2AErrorKind> = {
  bad_request: 'RequestMalformed',
  validation_failed: 'RequestMalformed',
  malformed_json: 'RequestMalformed',
  malformed_protobuf: 'RequestMalformed',
  body_too_deep: 'RequestMalformed',
  nul_character: 'RequestMalformed',
  invalid_content_encoding: 'RequestMalformed',
  invalid_value: 'RequestMalformed',
  invalid_cursor: 'RequestMalformed',
  invalid_idempotency_key: 'RequestMalformed',
  invalid_last_event_id: 'RequestMalformed',
  unknown_event: 'RequestMalformed',
  invalid_peer: 'RequestMalformed',
  invalid_webhook_url: 'RequestMalformed',
  invalid_push_url: 'RequestMalformed',
  invalid_issuer_url: 'RequestMalformed',
  invalid_upstream_url: 'RequestMalformed',
  invalid_trusted_keys: 'RequestMalformed',
  invalid_push_config: 'RequestMalformed',
  push_config_limit: 'RequestMalformed',
  context_mismatch: 'RequestMalformed',
  skill_mismatch: 'RequestMalformed',
  invalid_request: 'RequestMalformed',
  unsupported_grant_type: 'RequestMalformed',
  invalid_scope: 'RequestMalformed',
  invalid_grant: 'RequestMalformed',
  invalid_target: 'RequestMalformed',
  wrong_password: 'RequestMalformed',
  // A send that would go too deep: its params cannot be honoured (docs/api.md §18).
  tree_too_deep: 'RequestMalformed',

  unauthenticated: 'RequestMalformed',
  invalid_api_key: 'RequestMalformed',
  api_key_expired: 'RequestMalformed',
  invalid_session: 'RequestMalformed',
  invalid_client: 'RequestMalformed',
  invalid_token: 'RequestMalformed',
  invalid_credentials: 'RequestMalformed',
  sso_state_invalid: 'RequestMalformed',
  sso_sign_in_failed: 'RequestMalformed',
  sso_email_unverified: 'RequestMalformed',
  sso_no_account: 'RequestMalformed',
  password_sign_in_disabled: 'RequestMalformed',
  sso_not_configured: 'RequestMalformed',
  email_domain_taken: 'RequestMalformed',

  forbidden: 'RequestMalformed',
  admin_key_not_allowed: 'RequestMalformed',
  agent_key_not_allowed: 'RequestMalformed',
  console_session_not_allowed: 'RequestMalformed',
  not_an_api_key: 'RequestMalformed',
  identity_unclaimed: 'RequestMalformed',
  identity_not_own: 'RequestMalformed',
  own_identity_only: 'RequestMalformed',
  setting_not_permitted: 'RequestMalformed',
  admin_mint_forbidden: 'RequestMalformed',
  not_task_worker: 'RequestMalformed',
  requester_disabled: 'RequestMalformed',
  admission_denied: 'RequestMalformed',
  csrf_failed: 'RequestMalformed',
  route_not_declared: 'RequestMalformed',
  signup_closed: 'RequestMalformed',

  not_found: 'RequestMalformed',
  identity_not_found: 'RequestMalformed',
  agent_not_found: 'RequestMalformed',
  worker_not_found: 'RequestMalformed',
  api_key_not_found: 'RequestMalformed',
  contact_rule_not_found: 'RequestMalformed',
  peer_not_found: 'RequestMalformed',
  task_not_found: 'TaskNotFound',
  // A send naming a context the pair does not share is malformed params (docs/api.md §5).
  context_not_found: 'RequestMalformed',
  push_config_not_found: 'TaskNotFound',
  webhook_not_found: 'RequestMalformed',
  delivery_not_found: 'RequestMalformed',
  upstream_not_set: 'RequestMalformed',
  claim_code_invalid: 'RequestMalformed',
  invite_code_invalid: 'RequestMalformed',
  invite_not_found: 'RequestMalformed',
  member_not_found: 'RequestMalformed',
  trusted_issuer_not_found: 'RequestMalformed',
  approval_not_found: 'RequestMalformed',

  method_not_allowed: 'RequestMalformed',

  conflict: 'RequestMalformed',
  trusted_issuer_taken: 'RequestMalformed',
  handle_taken: 'RequestMalformed',
  email_taken: 'RequestMalformed',
  identity_deleted: 'RequestMalformed',
  contact_rule_exists: 'RequestMalformed',
  rule_limit_reached: 'RequestMalformed',
  key_limit_reached: 'RequestMalformed',
  webhook_limit_reached: 'RequestMalformed',
  webhook_disabled: 'RequestMalformed',
  delivery_in_flight: 'RequestMalformed',
  member_limit: 'RequestMalformed',
  invite_limit: 'RequestMalformed',
  last_member: 'RequestMalformed',
  task_terminal: 'UnsupportedOperation',
  task_not_cancelable: 'TaskNotCancelable',
  // Like a terminal task, a held one takes no messages (until it is approved).
  task_awaiting_approval: 'UnsupportedOperation',
  approval_decided: 'RequestMalformed',
  // Like a terminal task, a full one takes no more messages.
  task_message_limit: 'UnsupportedOperation',
  task_artifact_limit: 'UnsupportedOperation',
  invalid_transition: 'RequestMalformed',
  artifact_not_found: 'RequestMalformed',
  artifact_closed: 'RequestMalformed',
  usage_currency_mismatch: 'RequestMalformed',

  payload_too_large: 'RequestMalformed',
  unsupported_media_type: 'RequestMalformed',

  idempotency_key_reused: 'RequestMalformed',
  upstream_card_unreachable: 'RequestMalformed',
  upstream_binding_unsupported: 'RequestMalformed',

  rate_limited: 'RequestMalformed',
  too_many_open_calls: 'RequestMalformed',
  // Sent as the call's own refusal (HTTP 429 / RESOURCE_EXHAUSTED, CallRefused), not as an A2A error; mapped for completeness.
  quota_exceeded: 'RequestMalformed',

  internal_error: 'Internal',
};

/** The A2A error for an AppError, or null when it is internal (the caller logs it and answers opaquely). */
export function a2aErrorFor(error: AppError): A2AError | null {
  const kind = A2A_ERROR_KIND[error.code];
  switch (kind) {
    case 'TaskNotFound':
      return new TaskNotFoundError(error.detail);
    case 'UnsupportedOperation':
      return new UnsupportedOperationError(error.detail);
    case 'TaskNotCancelable':
      return new TaskNotCancelableError(error.detail);
    case 'RequestMalformed':
      return new RequestMalformedError(error.detail);
    case 'Internal':
      return null;
    default:
      return unmapped(kind);
  }
}

function unmapped(kind: never): never {
  throw new Error(`unmapped A2A error kind: ${String(kind)}`);
}

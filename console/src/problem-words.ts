/**
 * What the service's problem codes mean to a person, in one place (docs/api.md §9 lists the
 * codes). `field` names the form field the problem belongs to: the Console shows the words
 * next to that field instead of in a notice above the button.
 */
export const PROBLEM_WORDS: Record<string, { words: string; field?: string }> = {
  email_taken: { field: 'email', words: 'This email already has an account.' },
  handle_taken: { field: 'agent_handle', words: 'This handle is taken (handles are never reused). Choose another.' },
  peer_not_found: { field: 'peer', words: 'No identity or organization by that name.' },
  invalid_credentials: { field: 'password', words: 'The email or password is incorrect.' },
  wrong_password: { field: 'current_password', words: 'Your current password is incorrect.' },
  claim_code_invalid: { field: 'claim_code', words: 'This claim code is unknown, already used or expired.' },
  invalid_webhook_url: { field: 'url', words: 'This URL cannot receive webhooks (use https, a public address).' },
  invalid_upstream_url: { field: 'url', words: 'This URL cannot be an upstream agent (use https, a public address).' },
  invalid_issuer_url: {
    field: 'issuer',
    words: 'This address cannot serve an issuer’s keys (use https, a public address).',
  },
  trusted_issuer_taken: { field: 'audience', words: 'This issuer is already trusted for this audience.' },
  trusted_issuer_not_found: { words: 'This trusted issuer was removed meanwhile.' },
  identity_not_found: { words: 'There is no identity by that handle in your organization.' },
  identity_deleted: { words: 'This identity was deleted: it can be read but not changed.' },
  contact_rule_exists: { words: 'The identity already has a rule for that peer in that direction.' },
  invalid_peer: { field: 'peer', words: 'An identity cannot have a rule about itself.' },
  invite_code_invalid: { words: 'This invitation link is unknown, used, withdrawn or expired. Ask for a new one.' },
  last_member: { words: 'The last member of an organization cannot be removed.' },
  csrf_failed: { words: 'This change did not come from the Console’s own address. Reload the page and try again.' },
  rate_limited: { words: 'Too many attempts. Wait a moment and try again.' },
  webhook_disabled: { words: 'The webhook is disabled: enable it first.' },
  delivery_in_flight: { words: 'This delivery is being attempted right now.' },
  upstream_not_set: { words: 'The identity has no upstream agent.' },
  upstream_card_unreachable: { words: 'The upstream agent’s card could not be read.' },
  upstream_binding_unsupported: {
    words: 'Its card offers no interface the service can forward to (JSON-RPC, HTTP+JSON or gRPC, A2A 1.0 or 0.3).',
  },
  invalid_trusted_keys: {
    field: 'trusted_keys',
    words:
      'Pin public keys only: a JWK Set, {"keys": [ … ]}, of 1 to 20 EC, OKP or RSA public keys, or a key set URL instead.',
  },
  internal_error: { words: 'Something went wrong on our side. Try again in a moment.' },
};

/** An API field name as a person reads it: `current_password` → "Current password", `peer.handle` → "Peer handle". */
function fieldWords(field: string): string {
  const words = field.replace(/\[\d+\]|\.\d+/g, '').replace(/[._]/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** A server field message without API field names: "current_password is incorrect" → "Current password is incorrect". */
export function humanFieldMessage(field: string, message: string): string {
  const names = [field, field.replace(/\[(\d+)\]/g, '.$1'), field.split('.').pop() ?? field];
  for (const name of names) {
    if (message.startsWith(`${name} `)) {
      return `${fieldWords(name)}${message.slice(name.length)}`;
    }
  }
  return message;
}

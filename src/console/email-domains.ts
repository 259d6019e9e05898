/**
 * Email domains of single sign-on (docs/api.md §13): an organization's domains are
 * stored as written here, and a verified email joins the organization whose domain is
 * its own, exactly (a subdomain is another domain).
 */
const DOMAIN_PATTERN = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$/;

/** A domain as stored: trimmed, lower case, without a trailing dot; null if it is not one. */
export function normalizeDomain(domain: string): string | null {
  const value = domain.trim().toLowerCase().replace(/\.$/, '');
  return value.length <= 253 && DOMAIN_PATTERN.test(value) ? value : null;
}

/** The domain of an email address, as stored; null when the address has none that could be. */
export function emailDomain(email: string): string | null {
  const at = email.lastIndexOf('@');
  return at > 0 && email.length <= 254 ? normalizeDomain(email.slice(at + 1)) : null;
}

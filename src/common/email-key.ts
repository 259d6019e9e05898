/**
 * The form in which Console emails are compared: Unicode NFC, then lowercased by
 * JavaScript's locale-independent `toLowerCase` (and NFC again, as lowercasing can
 * leave a sequence that composes). Every comparison of an email — the unique index,
 * signup, login, its throttle bucket, invitations — uses this one function, through
 * the `email_key` column, so no two of them can disagree on whether two spellings
 * are one address (as JavaScript's and PostgreSQL's lowercasing of `İ` did).
 */
export function emailKey(email: string): string {
  return email.normalize('NFC').toLowerCase().normalize('NFC');
}

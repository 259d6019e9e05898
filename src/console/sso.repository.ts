import { Injectable } from '@nestjs/common';
import { Database, type Tx } from '../database/database';
import { DummyValue, GenerateSql } from '../database/generate-sql';
import type { RowOf } from '../database/row';
import { sql } from '../database/sql';
import type { ConsoleSsoLogin } from './console-sso-login.entity';
import type { OrganizationEmailDomain } from './organization-email-domain.entity';

/** A sign-in under way, as the callback reads it. */
export type SsoLoginRecord = Pick<ConsoleSsoLogin, 'state' | 'nonce' | 'codeVerifier' | 'nextPath'>;

type SsoLoginRow = Pick<RowOf<ConsoleSsoLogin>, 'state' | 'nonce' | 'code_verifier' | 'next_path'>;

/**
 * Single sign-on's tables (docs/api.md §13): the sign-ins under way
 * (`console_sso_logins`) and the organizations' email domains (`organization_email_domains`).
 */
@Injectable()
export class SsoRepository {
  constructor(private readonly db: Database) {}

  // console_sso_logins

  @GenerateSql({
    params: [
      {
        browserHash: DummyValue.BUFFER,
        state: DummyValue.STRING,
        nonce: DummyValue.STRING,
        codeVerifier: DummyValue.STRING,
        nextPath: '/console/',
        expiresAt: DummyValue.DATE,
      },
    ],
  })
  async insertLogin(login: {
    browserHash: Buffer;
    state: string;
    nonce: string;
    codeVerifier: string;
    nextPath: string | null;
    expiresAt: Date;
  }): Promise<void> {
    await this.db.execute(
      sql`INSERT INTO console_sso_logins (browser_hash, state, nonce, code_verifier, next_path, expires_at)
          VALUES (${login.browserHash}, ${login.state}, ${login.nonce}, ${login.codeVerifier}, ${login.nextPath}, ${login.expiresAt})`,
    );
  }

  /** Takes the live sign-in bound to the browser: deleted as it is read, so it is used once. */
  @GenerateSql({ params: [DummyValue.BUFFER] })
  async takeLogin(browserHash: Buffer): Promise<SsoLoginRecord | null> {
    const row = await this.db.one<SsoLoginRow & { live: boolean }>(
      sql`DELETE FROM console_sso_logins WHERE browser_hash = ${browserHash}
          RETURNING state, nonce, code_verifier, next_path, expires_at > now() AS live`,
    );
    return row?.live
      ? { state: row.state, nonce: row.nonce, codeVerifier: row.code_verifier, nextPath: row.next_path }
      : null;
  }

  /** Retention: deletes up to `batch` sign-ins past their expiry (their callback can no longer come); how many went. */
  @GenerateSql({ params: [500] })
  async pruneExpiredLogins(batch: number): Promise<number> {
    return this.db.execute(sql`
      DELETE FROM console_sso_logins WHERE browser_hash IN (
        SELECT browser_hash FROM console_sso_logins WHERE expires_at < now() LIMIT ${batch} FOR UPDATE SKIP LOCKED)`);
  }

  // organization_email_domains

  /** The organization's email domains, in order. */
  @GenerateSql({ params: [DummyValue.UUID] })
  async emailDomains(organizationId: string, tx?: Tx): Promise<string[]> {
    const rows = await this.db.rows<Pick<RowOf<OrganizationEmailDomain>, 'domain'>>(
      sql`SELECT domain FROM organization_email_domains WHERE organization_id = ${organizationId} ORDER BY domain`,
      tx,
    );
    return rows.map((row) => row.domain);
  }

  /** The organization that holds the domain, or null. */
  @GenerateSql({ params: [DummyValue.STRING] })
  async organizationForDomain(domain: string, tx?: Tx): Promise<string | null> {
    const row = await this.db.one<Pick<RowOf<OrganizationEmailDomain>, 'organization_id'>>(
      sql`SELECT organization_id FROM organization_email_domains WHERE domain = ${domain}`,
      tx,
    );
    return row?.organization_id ?? null;
  }

  /**
   * Makes `domains` the organization's set: the others it had go, the new ones are
   * added. Returns the domains another organization holds (nothing is changed then);
   * one taken by another organization meanwhile fails the unique key (23505).
   */
  @GenerateSql({ params: [DummyValue.UUID, ['acme.test']] })
  async replaceEmailDomains(organizationId: string, domains: readonly string[], tx: Tx): Promise<string[]> {
    const taken = await this.db.rows<Pick<RowOf<OrganizationEmailDomain>, 'domain'>>(
      sql`SELECT domain FROM organization_email_domains
           WHERE domain = ANY(${domains}::varchar[]) AND organization_id <> ${organizationId} ORDER BY domain`,
      tx,
    );
    if (taken.length > 0) {
      return taken.map((row) => row.domain);
    }
    await this.db.execute(
      sql`DELETE FROM organization_email_domains
           WHERE organization_id = ${organizationId} AND NOT (domain = ANY(${domains}::varchar[]))`,
      tx,
    );
    await this.db.execute(
      sql`INSERT INTO organization_email_domains (domain, organization_id)
          SELECT d, ${organizationId} FROM unnest(${domains}::varchar[]) AS d
           WHERE NOT EXISTS (SELECT 1 FROM organization_email_domains WHERE domain = d)`,
      tx,
    );
    return [];
  }
}

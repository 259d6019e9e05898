import { Injectable } from '@nestjs/common';
import { Database, type Tx } from '../database/database';
import { DummyValue, GenerateSql } from '../database/generate-sql';
import type { RowOf } from '../database/row';
import { sql } from '../database/sql';
import type { Organization } from './organization.entity';

type OrganizationRow = RowOf<Organization>;

const toOrganization = (row: OrganizationRow): Organization => ({ id: row.id, name: row.name, createdAt: row.created_at });

/**
 * The Console's tables: organizations, console_users, console_sessions, console_invites.
 * (On this branch only the method the events module needs; the console conversion adds the rest.)
 */
@Injectable()
export class ConsoleRepository {
  constructor(private readonly db: Database) {}

  // for events: webhooks.service.ts serializes webhook creations in one organization (the per-organization limit) on its row.
  /** The organization's row, locked for the transaction (teams serialize member and invitation counts on it). */
  @GenerateSql({ params: [DummyValue.UUID] })
  async lockOrganization(id: string, tx?: Tx): Promise<Organization | null> {
    const row = await this.db.one<OrganizationRow>(sql`SELECT id, name, created_at FROM organizations WHERE id = ${id} FOR UPDATE`, tx);
    return row ? toOrganization(row) : null;
  }
}

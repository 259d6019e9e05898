import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/**
 * An email domain whose verified addresses join the organization at their first single
 * sign-on (docs/api.md §13, single sign-on). Set by the organization's administrators
 * and trusted as they set it; a domain belongs to one organization at most.
 */
@Entity({ name: 'organization_email_domains' })
export class OrganizationEmailDomain {
  /** Lower case, without a trailing dot. */
  @PrimaryColumn({ type: 'varchar' })
  domain: string;

  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}

import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import type { UpstreamBinding, UpstreamVersion } from './dto/set-upstream.dto';

export type UpstreamAuthType = 'none' | 'bearer' | 'api_key';

/**
 * The A2A agent an identity forwards its work to (docs/api.md §14). `auth_value` is the
 * upstream's secret: read by the forwarder only, never returned by a route.
 */
@Entity({ name: 'identity_upstreams' })
export class IdentityUpstream {
  @PrimaryColumn({ name: 'identity_id', type: 'uuid' })
  identityId: string;

  @Column({ type: 'varchar' })
  url: string;

  @Column({ name: 'card_url', type: 'varchar', nullable: true })
  cardUrl: string | null;

  @Column({ name: 'protocol_version', type: 'varchar' })
  protocolVersion: UpstreamVersion;

  @Column({ type: 'varchar' })
  binding: UpstreamBinding;

  @Column({ type: 'boolean' })
  streaming: boolean;

  @Column({ name: 'auth_type', type: 'varchar' })
  authType: UpstreamAuthType;

  @Column({ name: 'auth_header', type: 'varchar', nullable: true })
  authHeader: string | null;

  @Column({ name: 'auth_value', type: 'varchar', nullable: true })
  authValue: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}

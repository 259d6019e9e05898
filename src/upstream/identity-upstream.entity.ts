import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import type { CardVerificationStatus } from './card-verification';
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

  /** The keys pinned for its card (a JWK Set of public keys), or null. */
  @Column({ name: 'trusted_jwks', type: 'jsonb', nullable: true })
  trustedJwks: { keys: object[] } | null;

  /** Where the pinned keys are read (a JWK Set), or null; never both this and trustedJwks. */
  @Column({ name: 'trusted_jwks_uri', type: 'varchar', nullable: true })
  trustedJwksUri: string | null;

  /** The last verification of its card; null until the card is read. */
  @Column({ name: 'card_verification', type: 'varchar', nullable: true })
  cardVerification: CardVerificationStatus | null;

  @Column({ name: 'card_verified_kid', type: 'varchar', nullable: true })
  cardVerifiedKid: string | null;

  @Column({ name: 'card_verification_error', type: 'varchar', nullable: true })
  cardVerificationError: string | null;

  @Column({ name: 'card_checked_at', type: 'timestamptz', nullable: true })
  cardCheckedAt: Date | null;

  /** Forward attempts failed in a row (reset by a success): the identity's availability (docs/api.md §4). */
  @Column({ name: 'failed_forwards', type: 'integer' })
  failedForwards: number;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}

import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** An issuer whose JWTs an organization trusts (docs/api.md §17): each mapped subject acts as one of its identities. */
@Entity({ name: 'trusted_issuers' })
export class TrustedIssuer {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId: string;

  /** The tokens' `iss`, exactly. */
  @Column({ type: 'text' })
  issuer: string;

  /** Where its keys are; null with no `jwks`: discovered from `{issuer}/.well-known/openid-configuration`. */
  @Column({ name: 'jwks_uri', type: 'text', nullable: true })
  jwksUri: string | null;

  /** Its keys given inline (a JWK Set of public keys), or null; never both this and jwksUri. */
  @Column({ type: 'jsonb', nullable: true })
  jwks: { keys: object[] } | null;

  /** The `aud` its tokens must name. */
  @Column({ type: 'text' })
  audience: string;

  /** The claim that names the subject (`sub`). */
  @Column({ name: 'subject_claim', type: 'text' })
  subjectClaim: string;

  /** Subject → the handle of the identity it acts as (handles are never reused). */
  @Column({ type: 'jsonb' })
  subjects: Record<string, string>;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}

import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/**
 * A single sign-on under way (docs/api.md §13): what the callback checks, kept from the
 * redirect to the provider until the provider sends the browser back. Used once.
 */
@Entity({ name: 'console_sso_logins' })
export class ConsoleSsoLogin {
  /** SHA-256 of the random value of the browser's HttpOnly sign-in cookie; the value is never stored. */
  @PrimaryColumn({ name: 'browser_hash', type: 'bytea' })
  browserHash: Buffer;

  @Column({ type: 'varchar' })
  state: string;

  @Column({ type: 'varchar' })
  nonce: string;

  /** The PKCE code verifier (its S256 challenge went to the provider). */
  @Column({ name: 'code_verifier', type: 'varchar' })
  codeVerifier: string;

  /** The Console page to land on. */
  @Column({ name: 'next_path', type: 'varchar', nullable: true })
  nextPath: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;
}
